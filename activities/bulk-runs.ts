// Bulk run jobs (shared/runs/bulk.ts): the snapshot of the filter, one page of runs at a time,
// and the end. Each is idempotent: items are marked once handled, counters are recounted from
// the items, a replay's new run has an id derived from job and run (a retried page resumes it).
import { ProblemError } from '../shared/errors.ts';
import { resolveInputFiles } from '../shared/files/run-inputs.ts';
import { requireConnections } from '../shared/integrations/readiness.ts';
import { agentForRun } from '../shared/packages/resolve-agent.ts';
import { BULK_MAX_RUNS, BULK_PAGE_SIZE, type BulkJobRow, filteredRuns, jobAudience, recountBulkJob, replayRunId } from '../shared/runs/bulk.ts';
import { requestRunCancel } from '../shared/runs/cancel.ts';
import { admitRun, ensureRunWorkflow, startRunWorkflow } from '../shared/runs/launch.ts';
import { isTerminal, type OwnerColumns, RUN_SELECT, type RunRow } from '../shared/runs/model.ts';
import { canReadRun, runsVisibleTo } from '../shared/runs/visibility.ts';
import { runInput } from '../shared/validation.ts';
import type { ActivityDeps } from './deps.ts';

export interface BulkPageInput {
  jobId: string;
  /** After waiting long enough on the organization's run limits: a refusal fails the item. */
  giveUpOnLimits?: boolean;
}

export interface BulkPageResult {
  /** No item left queued. */
  done: boolean;
  /** Items handled by this call. */
  handled: number;
  /** A replay refused by the organization's run limits: wait this long, then call again. */
  limitedForSeconds?: number;
}

type ItemOutcome =
  | { status: 'succeeded'; newRunId?: string }
  | { status: 'failed' | 'skipped'; code: string; detail: string }
  | { status: 'limited'; retryAfter: number };

const LIMIT_CODES = new Set(['org_run_rate_limited', 'org_run_concurrency_exceeded']);

export function createBulkRunsActivities(deps: Pick<ActivityDeps, 'knex' | 'workflows' | 'config'>) {
  const { knex, workflows, config } = deps;

  async function job(jobId: string): Promise<BulkJobRow | undefined> {
    return knex('bulk_jobs').where({ id: jobId }).first();
  }

  async function cancelOne(run: RunRow): Promise<ItemOutcome> {
    if (isTerminal(run.status)) return { status: 'skipped', code: 'run_not_cancellable', detail: `The run already ended ${run.status}` };
    await requestRunCancel(knex, workflows, run);
    return { status: 'succeeded' };
  }

  async function replayOne(j: BulkJobRow, run: RunRow, giveUpOnLimits: boolean): Promise<ItemOutcome> {
    const id = replayRunId(j.id, run.id);
    const existing = (await knex('runs').where({ id }).first()) as RunRow | undefined;
    if (existing) {
      // A page retried after the run was written: only a pending run may still need its workflow;
      // one that failed before it ever started (its workflow could not be queued) is no replay.
      if (existing.status === 'failed' && !existing.started_at)
        return { status: 'failed', code: 'service_unavailable', detail: existing.error ?? 'The run could not be queued' };
      await ensureRunWorkflow(knex, workflows, existing);
      return { status: 'succeeded', newRunId: id };
    }
    if (run.executor === 'remote') return { status: 'failed', code: 'invalid_request', detail: 'A remote run is replayed by its runner, not here' };
    const agent = await agentForRun(knex, run);
    if (!agent) return { status: 'failed', code: 'not_found', detail: `Version ${run.package_version} of the run's agent no longer exists` };
    const audience = jobAudience(j);
    try {
      const valid = runInput(agent.inputSchema, run.input);
      const where = { orgId: j.org_id, spaceId: j.space_id, canRead: (row: OwnerColumns) => canReadRun(audience, row) };
      const { input, files } = await resolveInputFiles(knex, where, agent, valid);
      const owner = j.end_user_id ? { type: 'end_user' as const, id: j.end_user_id } : { type: 'user' as const, id: j.user_id! };
      // No run.connection_missing event for a replay: the job's failure lists it.
      const connections = await requireConnections(knex, null, { orgId: j.org_id, spaceId: j.space_id, owner, agent, publicUrl: null });
      const row = await admitRun(knex, config.platformRunLimits, {
        id,
        orgId: j.org_id,
        spaceId: j.space_id,
        agent,
        input,
        files,
        connections,
        actor: { type: j.actor_type, id: j.actor_id },
        userId: j.user_id,
        endUserId: j.end_user_id,
      });
      await startRunWorkflow(knex, workflows, row, agent);
      return { status: 'succeeded', newRunId: id };
    } catch (err) {
      if (!(err instanceof ProblemError) || err.code === 'service_unavailable') throw err;
      if (LIMIT_CODES.has(err.code) && !giveUpOnLimits) return { status: 'limited', retryAfter: err.retryAfter ?? 5 };
      return { status: 'failed', code: err.code, detail: err.detail };
    }
  }

  return {
    /** Takes the snapshot of the filter once (the runs the job covers) and marks the job running. */
    async prepareBulkJob(jobId: string): Promise<void> {
      const j = await job(jobId);
      if (!j || j.total !== null) return;
      await knex.transaction(async (trx) => {
        const locked = (await trx('bulk_jobs').where({ id: jobId }).forUpdate().first()) as BulkJobRow;
        if (locked.total !== null) return;
        const rows = await filteredRuns(trx, jobAudience(j), j.filter)
          .orderBy([
            { column: 'r.created_at', order: 'asc' },
            { column: 'r.id', order: 'asc' },
          ])
          .limit(BULK_MAX_RUNS + 1)
          .select('r.id');
        const truncated = rows.length > BULK_MAX_RUNS;
        const ids: string[] = rows.slice(0, BULK_MAX_RUNS).map((r: { id: string }) => r.id);
        const items: Record<string, unknown>[] = ids.map((runId, seq) => ({ job_id: jobId, seq, run_id: runId }));
        // Named ids the creator may not read (or that do not exist) fail as not_found.
        const missing = (j.filter.ids ?? []).filter((id) => !ids.includes(id));
        const seen = new Set<string>();
        for (const runId of missing) {
          if (seen.has(runId)) continue;
          seen.add(runId);
          items.push({ job_id: jobId, seq: items.length, run_id: runId, status: 'failed', code: 'not_found', detail: 'No such run', processed_at: new Date() });
        }
        for (let i = 0; i < items.length; i += 500)
          await trx('bulk_job_items')
            .insert(items.slice(i, i + 500))
            .onConflict(['job_id', 'run_id'])
            .ignore();
        await trx('bulk_jobs').where({ id: jobId }).update({ total: items.length, truncated, status: 'running', started_at: trx.fn.now() });
        await recountBulkJob(trx, jobId);
      });
    },

    /** Handles the next page of queued items; stops early when a replay meets the run limits. */
    async processBulkPage(input: BulkPageInput): Promise<BulkPageResult> {
      const j = await job(input.jobId);
      if (!j) return { done: true, handled: 0 };
      const items = await knex('bulk_job_items').where({ job_id: j.id, status: 'queued' }).orderBy('seq').limit(BULK_PAGE_SIZE).select('run_id');
      let handled = 0;
      let limitedForSeconds: number | undefined;
      for (const { run_id } of items) {
        // Visibility again: a run deleted meanwhile, or moved out of reach, is not touched.
        const run = (await runsVisibleTo(knex, jobAudience(j)).where('r.id', run_id).select(RUN_SELECT).first()) as RunRow | undefined;
        let outcome: ItemOutcome;
        if (!run) outcome = { status: 'failed', code: 'not_found', detail: 'No such run' };
        else outcome = j.kind === 'cancel' ? await cancelOne(run) : await replayOne(j, run, input.giveUpOnLimits === true);
        if (outcome.status === 'limited') {
          limitedForSeconds = Math.max(1, Math.min(60, outcome.retryAfter));
          break;
        }
        await knex('bulk_job_items')
          .where({ job_id: j.id, run_id, status: 'queued' })
          .update({
            status: outcome.status,
            new_run_id: outcome.status === 'succeeded' ? (outcome.newRunId ?? null) : null,
            code: outcome.status === 'succeeded' ? null : outcome.code,
            detail: outcome.status === 'succeeded' ? null : outcome.detail,
            processed_at: knex.fn.now(),
          });
        handled++;
      }
      await recountBulkJob(knex, j.id);
      const left = await knex('bulk_job_items').where({ job_id: j.id, status: 'queued' }).first('run_id');
      return { done: !left, handled, ...(limitedForSeconds ? { limitedForSeconds } : {}) };
    },

    async finishBulkJob(jobId: string): Promise<void> {
      await recountBulkJob(knex, jobId);
      await knex('bulk_jobs').where({ id: jobId }).whereNot({ status: 'completed' }).update({ status: 'completed', finished_at: knex.fn.now() });
    },
  };
}
