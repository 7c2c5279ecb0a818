import type { Knex } from 'knex';
import { agentOfVersion, type ResolvedAgent } from '../shared/packages/resolve-agent.ts';
import type { PackageRow, PackageVersionRow } from '../shared/packages/types.ts';
import { RUN_SELECT, type RunRow, runsWithPackage } from '../shared/runs/model.ts';

type Loaded = RunRow & { scope: string; name: string; pkg: PackageRow } & Partial<Record<'v_version' | 'v_manifest' | 'v_files', unknown>>;

/**
 * The run and the exact agent version it was launched with; undefined once the run is deleted.
 * One query for the run, its package and its version (every run's start waits for it: it was
 * two round trips to Postgres, the run then the package and the version).
 */
export async function loadRunWithAgent(knex: Knex, runId: string): Promise<{ run: RunRow; agent: ResolvedAgent | undefined } | undefined> {
  const row = (await runsWithPackage(knex)
    .leftJoin('package_versions as v', (on) => on.on('v.package_id', 'r.package_id').andOn('v.version', 'r.package_version'))
    .where('r.id', runId)
    .select(...RUN_SELECT, knex.raw('to_jsonb(p) as pkg'), 'v.version as v_version', 'v.manifest as v_manifest', 'v.files as v_files')
    .first()) as Loaded | undefined;
  if (!row) return undefined; // deleted (directly, or with its organization) while queued
  const { pkg, v_version, v_manifest, v_files, ...run } = row;
  const chosen =
    v_version === null || v_version === undefined ? undefined : ({ version: v_version, manifest: v_manifest, files: v_files } as PackageVersionRow);
  return { run, agent: chosen ? await agentOfVersion(knex, pkg, chosen) : undefined };
}
