// Inline (ephemeral) runs (SPEC 4.4, 8.4): an agent manifest and prompt sent with the launch.
// The checks come in a fixed order: INLINE_RUN_LIMITS (sizes first, before anything parses the
// manifest further), the manifest, the input; then skills resolve in the organization. A run
// gets a temporary package of its own, emptied after `retention_days` by purgeInlinePackage.
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config, InlineRunLimits } from '../config.ts';
import { type ProblemFieldError, problem } from '../errors.ts';
import { newId } from '../ids.ts';
import { manifestFile } from '../packages/draft.ts';
import { validateManifest } from '../packages/manifest-schema.ts';
import { promptTemplateErrors } from '../packages/prompt-template.ts';
import { agentOf, DEFAULT_RUNTIME_TOOLS, type ResolvedAgent } from '../packages/resolve-agent.ts';
import { type FileMap, type PackageRow, splitName } from '../packages/types.ts';
import { runInput } from '../validation.ts';
import { startPurgeInlinePackageWorkflow } from '../../temporal/starters/purge-inline-package.ts';
import { admitRun, type LaunchRequest } from './launch.ts';
import type { RunRow } from './model.ts';

export interface InlineRunBody {
  manifest: Record<string, unknown>;
  prompt: string;
  input?: Record<string, unknown>;
  /** {<integration id>: <conn id>} (shared/integrations/readiness.ts) */
  connections?: Record<string, string>;
}

export interface CheckedInlineRun {
  manifest: Record<string, any>;
  /** The input with the input schema's defaults applied. */
  input: Record<string, unknown>;
}

type Limit = Exclude<keyof InlineRunLimits, 'rate_per_min' | 'retention_days'>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Entries of a map (or list) the manifest may not have validated yet: anything else counts 0. */
const countOf = (v: unknown): number => (Array.isArray(v) ? v.length : isObject(v) ? Object.keys(v).length : 0);

function exceeded(field: string, limit: Limit, message: string): ProblemFieldError {
  return { field, code: 'limit_exceeded', message, limit };
}

/** Every INLINE_RUN_LIMITS entry the request exceeds (none: an empty list). */
function inlineLimitErrors(limits: InlineRunLimits, body: InlineRunBody): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  const manifestBytes = Buffer.byteLength(JSON.stringify(body.manifest));
  if (manifestBytes > limits.manifest_bytes) {
    errors.push(exceeded('manifest', 'manifest_bytes', `manifest is ${manifestBytes} bytes; INLINE_RUN_LIMITS.manifest_bytes is ${limits.manifest_bytes}`));
  }
  const promptBytes = Buffer.byteLength(body.prompt);
  if (promptBytes > limits.prompt_bytes) {
    errors.push(exceeded('prompt', 'prompt_bytes', `prompt is ${promptBytes} bytes; INLINE_RUN_LIMITS.prompt_bytes is ${limits.prompt_bytes}`));
  }
  const m = body.manifest;
  const skills = countOf(isObject(m.dependencies) ? m.dependencies.skills : undefined);
  if (skills > limits.max_skills) {
    errors.push(
      exceeded(
        'manifest.dependencies.skills',
        'max_skills',
        `manifest.dependencies.skills has ${skills} entries; INLINE_RUN_LIMITS.max_skills is ${limits.max_skills}`,
      ),
    );
  }
  const integrations = Object.entries(isObject(m.integrations_configuration) ? m.integrations_configuration : {}).filter(
    (e): e is [string, Record<string, unknown>] => isObject(e[1]),
  );
  const tools = countOf(m.runtime_tools) + integrations.reduce((n, [, c]) => n + countOf(c.tools), 0);
  if (tools > limits.max_tools) {
    errors.push(
      exceeded(
        'manifest',
        'max_tools',
        `manifest declares ${tools} tools (runtime_tools and integrations_configuration.*.tools); INLINE_RUN_LIMITS.max_tools is ${limits.max_tools}`,
      ),
    );
  }
  for (const [id, c] of integrations) {
    if (!Array.isArray(c.authorized_uris)) continue;
    const field = `manifest.integrations_configuration.${id}.authorized_uris`;
    if (c.authorized_uris.length > limits.max_authorized_uris) {
      errors.push(
        exceeded(
          field,
          'max_authorized_uris',
          `${field} has ${c.authorized_uris.length} entries; INLINE_RUN_LIMITS.max_authorized_uris is ${limits.max_authorized_uris}`,
        ),
      );
    }
    if (limits.wildcard_uri_allowed) continue;
    c.authorized_uris.forEach((uri, i) => {
      if (typeof uri === 'string' && uri.includes('*')) {
        errors.push(
          exceeded(`${field}.${i}`, 'wildcard_uri_allowed', `${field}.${i} ("${uri}") has a wildcard; INLINE_RUN_LIMITS.wildcard_uri_allowed is false`),
        );
      }
    });
  }
  return errors;
}

/**
 * The checks both inline routes share, short of skills (resolved with the package, or by the
 * validate route): limits (400 `inline_limit_exceeded`), the agent manifest and the input
 * against its schema (400 `validation_failed`).
 */
export function checkInlineRun(limits: InlineRunLimits, body: InlineRunBody): CheckedInlineRun {
  const errors = inlineLimitErrors(limits, body);
  if (errors.length > 0) throw problem('inline_limit_exceeded', { detail: errors[0].message, errors });
  const manifest = validateManifest(body.manifest, 'agent');
  // The prompt is a template, refused as at import when it does not parse (DESIGN.md 5).
  const templateErrors = promptTemplateErrors(body.prompt, 'prompt');
  if (templateErrors.length) throw problem('validation_failed', { detail: templateErrors[0].message, errors: templateErrors });
  return { manifest, input: runInput(manifest.input?.schema, body.input) };
}

/** The tools a run of `manifest` gets: runtime tool ids (the defaults when none are declared), then `<integration>:<tool>`. */
export function toolsOf(manifest: Record<string, any>): string[] {
  const runtime: string[] = manifest.runtime_tools ?? [...DEFAULT_RUNTIME_TOOLS];
  const integrations = Object.entries((manifest.integrations_configuration ?? {}) as Record<string, { tools?: string[] }>);
  return [...runtime, ...integrations.flatMap(([id, c]) => (c.tools ?? []).map((t) => `${id}:${t}`))];
}

/**
 * One transaction: the temporary package and its single version, the run (organization limits
 * apply), and the purge workflow, started before the commit so that no run exists without its
 * purge (a purge whose package never committed finds nothing and ends). The caller starts the
 * run's workflow after the commit.
 */
export async function admitInlineRun(
  knex: Knex,
  workflows: Client,
  config: Pick<Config, 'platformRunLimits' | 'inlineRunLimits'>,
  launch: Omit<LaunchRequest, 'agent' | 'input'>,
  inline: { checked: CheckedInlineRun; prompt: string },
): Promise<{ run: RunRow; agent: ResolvedAgent }> {
  const { manifest, input } = inline.checked;
  const { scope, name } = splitName(manifest.name)!;
  const files: FileMap = { 'manifest.json': manifestFile(manifest), 'prompt.md': { encoding: 'utf8', content: inline.prompt } };
  return knex.transaction(async (trx) => {
    const [pkg] = (await trx('packages')
      .insert({
        id: newId('pkg'),
        org_id: launch.orgId,
        scope,
        name,
        type: 'agent',
        home_space_id: launch.spaceId,
        ephemeral: true,
        created_by: launch.userId,
        draft_manifest: JSON.stringify(manifest),
        draft_files: JSON.stringify(files),
      })
      .returning('*')) as PackageRow[];
    await trx('package_versions').insert({
      package_id: pkg.id,
      version: manifest.version,
      org_id: launch.orgId,
      manifest: JSON.stringify(manifest),
      files: JSON.stringify(files),
      created_by: launch.userId,
    });
    const agent = await agentOf(trx, pkg, manifest.version, manifest, files);
    const run = await admitRun(trx, config.platformRunLimits, { ...launch, agent, input });
    try {
      await startPurgeInlinePackageWorkflow(workflows, { packageId: pkg.id, retentionDays: config.inlineRunLimits.retention_days });
    } catch {
      throw problem('service_unavailable', 'The inline run could not be queued: the workflow service is unavailable');
    }
    return { run, agent };
  });
}
