// Retention of inline runs (SPEC 3.2, 8.4): once `retention_days` have passed, the temporary
// package loses its manifest and prompt and its runs lose their logs; the run records (input,
// result, status) stay readable. Idempotent: a retry, or a purge of a package already purged,
// changes nothing more.
import { LIVE_STATUSES } from '../shared/runs/model.ts';
import type { ActivityDeps } from './deps.ts';

/** `busy`: a run of the package is still pending or running; `gone`: no such inline package. */
export type PurgeOutcome = 'purged' | 'busy' | 'gone';

export function createPurgeInlinePackageActivity(deps: Pick<ActivityDeps, 'knex'>) {
  const { knex } = deps;
  return {
    async purgeInlinePackage(input: { packageId: string }): Promise<PurgeOutcome> {
      return knex.transaction(async (trx) => {
        // Only ever an inline package, whatever id the workflow was given.
        const pkg = await trx('packages').where({ id: input.packageId, ephemeral: true }).forUpdate().first('id');
        if (!pkg) return 'gone';
        const runs = trx('runs').select('id').where({ package_id: pkg.id });
        if (await runs.clone().whereIn('status', LIVE_STATUSES).first()) return 'busy';
        await trx('packages')
          .where({ id: pkg.id })
          .update({ draft_manifest: '{}', draft_files: '{}', draft_revision: trx.raw('draft_revision + 1'), updated_at: trx.fn.now() });
        await trx('package_versions').where({ package_id: pkg.id }).update({ manifest: '{}', files: '{}' });
        await trx('run_logs').whereIn('run_id', runs.clone()).delete();
        // Notes and pins of an inline agent: no later run can read them, and they hold what it saw.
        await trx('agent_memory').where({ package_id: pkg.id }).delete();
        return 'purged';
      });
    },
  };
}
