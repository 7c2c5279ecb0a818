// Wire representations of packages: the agent draft (SPEC 2.10) and integration/skill/MCP
// server packages (SPEC 2.11). Both describe the DRAFT (`definition`, `prompt`, `content`,
// inputs, dependencies); `version` and `manifest` are the latest published version.
import type { Knex } from 'knex';
import type { SpaceAuthority } from './authority.ts';
import { hasUnarchivedChanges, orderedManifest } from './draft.ts';
import { findOrgSkill, latestVersion, versionNames } from './store.ts';
import { effectiveTimeoutSeconds } from './timeout.ts';
import { type PackageRow, type PackageType, TYPE_SCOPES, fileText, fullName } from './types.ts';
import { defaultSpaceId, visiblePackagesQuery } from './visibility.ts';
import { pickVersion } from './versions.ts';

export interface ViewContext {
  knex: Knex;
  orgId: string;
  /** The request space. */
  spaceId: string;
  authority: SpaceAuthority;
  timeoutCeilingSeconds: number;
}

const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString() : null);

/** Versions, draft state and the caller's authority in the home space: common to 2.10 and 2.11. */
async function common(v: ViewContext, pkg: PackageRow) {
  const scopes = TYPE_SCOPES[pkg.type];
  const [versions, latest, home, def] = await Promise.all([
    versionNames(v.knex, pkg.id),
    latestVersion(v.knex, pkg.id),
    v.authority.scopesIn(pkg.home_space_id),
    defaultSpaceId(v.knex, v.orgId),
  ]);
  const homeWritable = home.has(scopes.write);
  const shareable = homeWritable && def !== undefined && def !== pkg.home_space_id && (await v.authority.holds(def, scopes.write));
  return {
    id: fullName(pkg),
    version: latest?.version ?? null,
    manifest: latest ? orderedManifest(latest.manifest, latest.files) : null,
    definition: orderedManifest(pkg.draft_manifest, pkg.draft_files),
    source: pkg.source,
    version_count: versions.length,
    has_unarchived_changes: hasUnarchivedChanges(pkg, latest),
    forked_from: pkg.forked_from,
    home_space_id: pkg.home_space_id,
    home_writable: homeWritable,
    home_deletable: home.has(scopes.delete),
    home_shareable: shareable,
  };
}

async function skillDependencies(v: ViewContext, deps: Record<string, string>) {
  const out = [];
  for (const [id, range] of Object.entries(deps)) {
    const skill = await findOrgSkill(v.knex, v.orgId, id);
    const version = skill ? (pickVersion(await versionNames(v.knex, skill.id), range) ?? null) : null;
    out.push({
      id,
      version,
      range,
      name: String(skill?.draft_manifest.display_name ?? id),
      description: String(skill?.draft_manifest.description ?? ''),
      home_writable: skill ? await v.authority.holds(skill.home_space_id, 'skills:write') : false,
    });
  }
  return out;
}

function integrationDependencies(m: Record<string, any>) {
  const deps: Record<string, string> = m.dependencies?.integrations ?? {};
  const config: Record<string, { tools?: string[]; scopes?: string[]; auth_key?: string }> = m.integrations_configuration ?? {};
  const ids = [...new Set([...Object.keys(deps), ...Object.keys(config)])];
  return ids.map((id) => ({
    id,
    version: deps[id] ?? null,
    tools: config[id]?.tools ?? [],
    scopes: config[id]?.scopes ?? [],
    auth_key: config[id]?.auth_key ?? null,
  }));
}

async function runsOf(v: ViewContext, pkg: PackageRow) {
  const last = await v
    .knex('runs')
    .select('id', 'status', 'started_at', 'finished_at')
    .where({ org_id: v.orgId, space_id: v.spaceId, package_id: pkg.id })
    .orderBy('created_at', 'desc')
    .first();
  const running = await v
    .knex('runs')
    .where({ org_id: v.orgId, package_id: pkg.id })
    .whereIn('status', ['pending', 'running'])
    .count<{ n: string }[]>({ n: '*' });
  const duration = last?.started_at && last?.finished_at ? new Date(last.finished_at).getTime() - new Date(last.started_at).getTime() : null;
  return {
    last_run: last ? { id: last.id, status: last.status, started_at: iso(last.started_at), duration } : null,
    running_runs: Number(running[0].n),
  };
}

/** SPEC 2.10: the agent draft. */
export async function agentRepresentation(v: ViewContext, pkg: PackageRow) {
  const base = await common(v, pkg);
  const m = base.definition;
  const input = m.input ?? {};
  const output = m.output ?? {};
  return {
    object: 'agent' as const,
    id: base.id,
    display_name: m.display_name ?? null,
    description: m.description ?? null,
    source: base.source,
    scope: pkg.scope,
    version: base.version,
    definition: base.definition,
    manifest: base.manifest,
    prompt: fileText(pkg.draft_files, 'prompt.md') ?? '',
    updatedAt: iso(pkg.updated_at),
    input: {
      values: {},
      locked_fields: [],
      schema: input.schema ?? null,
      file_constraints: input.file_constraints ?? {},
      ui_hints: input.ui_hints ?? {},
      property_order: input.property_order ?? Object.keys(input.schema?.properties ?? {}),
    },
    output: { schema: output.schema ?? null, property_order: output.property_order ?? Object.keys(output.schema?.properties ?? {}) },
    dependencies: {
      skills: await skillDependencies(v, m.dependencies?.skills ?? {}),
      mcp_servers: Object.entries((m.dependencies?.mcp_servers ?? {}) as Record<string, string>).map(([id, version]) => ({ id, version })),
      integrations: integrationDependencies(m),
    },
    ...(await runsOf(v, pkg)),
    version_count: base.version_count,
    forked_from: base.forked_from,
    home_space_id: base.home_space_id,
    home_writable: base.home_writable,
    home_deletable: base.home_deletable,
    home_shareable: base.home_shareable,
    has_unarchived_changes: base.has_unarchived_changes,
    effective_timeout_seconds: effectiveTimeoutSeconds(m.timeout, v.timeoutCeilingSeconds),
    active: !pkg.ephemeral && base.version_count > 0,
  };
}

const DEPENDENCY_KEY: Record<PackageType, string | undefined> = {
  agent: undefined,
  skill: 'skills',
  integration: 'integrations',
  'mcp-server': 'mcp_servers',
};

/** Agents visible from the request space whose draft depends on `pkg`. */
async function dependentAgents(v: ViewContext, pkg: PackageRow) {
  const key = DEPENDENCY_KEY[pkg.type];
  if (!key) return [];
  const q = visiblePackagesQuery(v.knex, v.orgId, v.spaceId)
    .where('packages.type', 'agent')
    .where('packages.ephemeral', false)
    .where((w) => {
      w.whereRaw(`jsonb_exists(packages.draft_manifest->'dependencies'->?, ?)`, [key, fullName(pkg)]);
      if (pkg.type === 'integration') w.orWhereRaw(`jsonb_exists(packages.draft_manifest->'integrations_configuration', ?)`, [fullName(pkg)]);
    })
    .select('packages.scope', 'packages.name', 'packages.draft_manifest')
    .orderBy(['packages.scope', 'packages.name']);
  const rows = (await q) as Pick<PackageRow, 'scope' | 'name' | 'draft_manifest'>[];
  return rows.map((r) => ({ id: fullName(r), display_name: r.draft_manifest.display_name ?? null }));
}

/** SPEC 2.11: integration, skill and MCP server packages. */
export async function packageRepresentation(v: ViewContext, pkg: PackageRow) {
  const m = pkg.draft_manifest;
  const base = await common(v, pkg);
  return {
    object: 'package' as const,
    type: pkg.type,
    id: base.id,
    orgId: pkg.org_id,
    name: m.display_name ?? pkg.name,
    description: m.description ?? null,
    definition: base.definition,
    content: pkg.type === 'skill' ? (fileText(pkg.draft_files, 'SKILL.md') ?? '') : null,
    source: base.source,
    created_by: pkg.created_by,
    auto_installed: pkg.auto_installed,
    version: base.version,
    manifest: base.manifest,
    manifest_name: m.name ?? base.id,
    version_count: base.version_count,
    has_unarchived_changes: base.has_unarchived_changes,
    forked_from: base.forked_from,
    home_space_id: base.home_space_id,
    home_writable: base.home_writable,
    home_deletable: base.home_deletable,
    home_shareable: base.home_shareable,
    agents: await dependentAgents(v, pkg),
    createdAt: iso(pkg.created_at),
    updatedAt: iso(pkg.updated_at),
  };
}

/** 2.10 for agents, 2.11 for the other types. */
export function representation(v: ViewContext, pkg: PackageRow) {
  return pkg.type === 'agent' ? agentRepresentation(v, pkg) : packageRepresentation(v, pkg);
}
