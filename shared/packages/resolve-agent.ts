// What the run launcher needs of an agent: the chosen published version, its prompt, schemas,
// timeout, runtime tools and resolved skills.
import type { Knex } from 'knex';
import { problem } from '../errors.ts';
import { orderedManifest } from './draft.ts';
import { findOrgSkill, findVersion, getVersion } from './store.ts';
import { pickVersion } from './versions.ts';
import { preparedShape } from '../db/prepared.ts';
import { type FileMap, fileText, fullName, type PackageRow, type PackageVersionRow, splitName } from './types.ts';
import { VERSION_NAMES_SQL, visiblePackagesQuery } from './visibility.ts';

export { findVisiblePackage } from './visibility.ts';
export type { PackageRow } from './types.ts';

export interface ResolvedSkill {
  id: string;
  version: string;
  name: string;
  description: string;
  /** SKILL.md */
  content: string;
}

/** An `mcp-server` dependency: its chosen version and the manifest's `remote` (DESIGN.md 7). */
export interface ResolvedMcpServer {
  /** '@scope/name' */
  id: string;
  version: string;
  /** Absent when the server declares no remote (nothing to connect to). */
  remote?: { url: string; transport: 'streamable-http'; auth?: { integration: string; auth_key: string } };
}

export interface ResolvedAgent {
  /** packages.id (pkg_...) */
  packageId: string;
  /** '@scope/name' */
  fullName: string;
  /** The published version chosen. */
  version: string;
  homeSpaceId: string;
  manifest: Record<string, any>;
  /** prompt.md of that version. */
  prompt: string;
  /** manifest.input.schema */
  inputSchema: Record<string, any> | null;
  /** manifest.output.schema */
  outputSchema: Record<string, any> | null;
  /** manifest.timeout */
  timeoutSeconds: number | null;
  /** manifest.runtime_tools, default ['output','log','note','pin'] */
  runtimeTools: string[];
  /** manifest.dependencies.skills resolved (semver range -> highest published version) in the same org. */
  skills: ResolvedSkill[];
  /** manifest.dependencies.mcp_servers resolved like skills (highest published version in range, same org). */
  mcpServers: ResolvedMcpServer[];
}

export const DEFAULT_RUNTIME_TOOLS: readonly string[] = ['output', 'log', 'note', 'pin'];

/**
 * Resolves each `dependencies.skills` entry (id -> semver range) to the highest published
 * version of that skill in the organization. A skill that is missing, or has no version in
 * range, is 409 `dependency_unresolved` naming it.
 */
export async function resolveSkills(knex: Knex, orgId: string, deps: Record<string, string> | undefined): Promise<ResolvedSkill[]> {
  const out: ResolvedSkill[] = [];
  for (const [id, range] of Object.entries(deps ?? {})) {
    const pkg = await findOrgSkill(knex, orgId, id);
    const version = pkg ? await findVersion(knex, pkg.id, range) : undefined;
    if (!pkg || !version) {
      throw problem('dependency_unresolved', {
        detail: `Skill ${id} has no published version matching ${range}`,
        errors: [
          { field: `manifest.dependencies.skills.${id}`, code: 'dependency_unresolved', message: `No version of ${id} matches ${range}`, packageId: id },
        ],
      });
    }
    out.push({
      id,
      version: version.version,
      name: String(version.manifest.display_name ?? id),
      description: String(version.manifest.description ?? ''),
      content: fileText(version.files, 'SKILL.md') ?? '',
    });
  }
  return out;
}

/**
 * Resolves each `dependencies.mcp_servers` entry like the skills: the highest published version
 * in range of that mcp-server package in the organization; else 409 `dependency_unresolved`.
 */
export async function resolveMcpServers(knex: Knex, orgId: string, deps: Record<string, string> | undefined): Promise<ResolvedMcpServer[]> {
  const out: ResolvedMcpServer[] = [];
  for (const [id, range] of Object.entries(deps ?? {})) {
    const parts = splitName(id);
    const pkg = parts
      ? ((await knex('packages').where({ org_id: orgId, scope: parts.scope, name: parts.name, type: 'mcp-server', ephemeral: false }).first()) as
          | PackageRow
          | undefined)
      : undefined;
    const version = pkg ? await findVersion(knex, pkg.id, range) : undefined;
    if (!pkg || !version) {
      throw problem('dependency_unresolved', {
        detail: `MCP server ${id} has no published version matching ${range}`,
        errors: [
          { field: `manifest.dependencies.mcp_servers.${id}`, code: 'dependency_unresolved', message: `No version of ${id} matches ${range}`, packageId: id },
        ],
      });
    }
    const remote = version.manifest.remote;
    out.push({ id, version: version.version, ...(remote?.url ? { remote } : {}) });
  }
  return out;
}

/** Published versions already read: immutable once published, kept by package id and version. */
const publishedVersions = new Map<string, PackageVersionRow>();
const MAX_KEPT_VERSIONS = 256;

/**
 * A version of a named (not inline) package, from memory once read: a published version never
 * changes, and which versions exist is read afresh by every launch, so a deleted package or
 * version is never served from here.
 */
async function publishedVersion(knex: Knex, packageId: string, version: string): Promise<PackageVersionRow | undefined> {
  const key = `${packageId}@${version}`;
  const kept = publishedVersions.get(key);
  if (kept) return kept;
  const row = await getVersion(knex, packageId, version);
  if (row && !knex.isTransaction) {
    if (publishedVersions.size >= MAX_KEPT_VERSIONS) publishedVersions.clear();
    publishedVersions.set(key, row);
  }
  return row;
}

/**
 * An SQL expression read in the package's query, in the same round trip, its value handed to
 * `read` when a package matched (a launch confirms its access epoch so: api/access-cache.ts);
 * resolveAgent throws what `read` throws. `name` stands for `sql`: the query is prepared once
 * per name.
 */
export interface ReadAlongside {
  name: string;
  sql: string;
  read(value: string | number): void;
}

/**
 * Latest published version when `version` is omitted; exact version, dist-tag `latest`, or semver range otherwise. Returns
 * undefined when the agent is not visible from spaceId or has no matching version.
 */
export async function resolveAgent(
  knex: Knex,
  orgId: string,
  spaceId: string,
  scope: string,
  name: string,
  version?: string,
  alongside?: ReadAlongside,
): Promise<ResolvedAgent | undefined> {
  // The package with its version names in one query (a launch's hot path), then the chosen version.
  const [pkg] = await preparedShape<PackageRow & { version_names: string[]; alongside?: string | number }>(
    knex,
    alongside ? `launch-package+${alongside.name}` : 'launch-package',
    [orgId, spaceId, scope, name],
    (o: string, sp: string, sc: string, n: string) =>
      visiblePackagesQuery(knex, o, sp)
        .where({ 'packages.scope': sc, 'packages.name': n, 'packages.type': 'agent' })
        .select('packages.*', knex.raw(`${VERSION_NAMES_SQL} as version_names`), ...(alongside ? [knex.raw(`${alongside.sql} as alongside`)] : []))
        .first(),
  );
  if (pkg && alongside) alongside.read(pkg.alongside!);
  const picked = pkg && pickVersion(pkg.version_names, version);
  const chosen = picked ? await publishedVersion(knex, pkg.id, picked) : undefined;
  if (!pkg || !chosen) return undefined;
  return agentOf(knex, pkg, chosen.version, orderedManifest(chosen.manifest, chosen.files), chosen.files);
}

/** What a run needs of one version of an agent package (published, or the manifest of an inline run). */
export async function agentOf(knex: Knex, pkg: PackageRow, version: string, m: Record<string, any>, files: FileMap): Promise<ResolvedAgent> {
  // Read at once; a refusal of the skills is the one reported when both are refused, as before.
  const [skillsRead, mcpRead] = await Promise.allSettled([
    resolveSkills(knex, pkg.org_id, m.dependencies?.skills),
    resolveMcpServers(knex, pkg.org_id, m.dependencies?.mcp_servers),
  ]);
  if (skillsRead.status === 'rejected') throw skillsRead.reason;
  if (mcpRead.status === 'rejected') throw mcpRead.reason;
  return {
    packageId: pkg.id,
    fullName: fullName(pkg),
    version,
    homeSpaceId: pkg.home_space_id,
    manifest: m,
    prompt: fileText(files, 'prompt.md') ?? '',
    inputSchema: m.input?.schema ?? null,
    outputSchema: m.output?.schema ?? null,
    timeoutSeconds: typeof m.timeout === 'number' ? m.timeout : null,
    runtimeTools: Array.isArray(m.runtime_tools) ? [...m.runtime_tools] : [...DEFAULT_RUNTIME_TOOLS],
    skills: skillsRead.value,
    mcpServers: mcpRead.value,
  };
}

/** The exact package version a run was launched with, found by package id (inline packages have no visible name). */
export async function agentForRun(knex: Knex, run: { package_id: string; package_version: string }): Promise<ResolvedAgent | undefined> {
  // Both by the run's own ids, at once: one round trip on every run's start instead of two.
  const [pkg, chosen] = await Promise.all([
    knex('packages').where({ id: run.package_id }).first() as Promise<PackageRow | undefined>,
    getVersion(knex, run.package_id, run.package_version),
  ]);
  return pkg && chosen ? agentOfVersion(knex, pkg, chosen) : undefined;
}

/** What a run needs of `chosen`, a version of `pkg` read by the caller (agentForRun; a run's start, which reads it with the run). */
export function agentOfVersion(knex: Knex, pkg: PackageRow, chosen: Pick<PackageVersionRow, 'version' | 'manifest' | 'files'>): Promise<ResolvedAgent> {
  return agentOf(knex, pkg, chosen.version, orderedManifest(chosen.manifest, chosen.files), chosen.files);
}
