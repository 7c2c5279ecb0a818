// Bulk run operations (issue 19): a job cancels or replays every run a filter matches, as the
// `bulkRuns` workflow (workflows/bulk-runs.ts) processing pages of its snapshot
// (activities/bulk-runs.ts). Rows: `bulk_jobs` and `bulk_job_items` (migration 020); how a job
// is shown: bulk-model.ts.
import type { Knex } from 'knex';
import { deterministicEventId } from '../events/publish.ts';
import { randomBase62 } from '../ids.ts';
import type { RunRow, RunStatus } from './model.ts';
import { type RunAudience, runsVisibleTo } from './visibility.ts';

export type BulkKind = 'cancel' | 'replay';
export type BulkJobStatus = 'queued' | 'running' | 'completed';

/** Runs a job may cover when its filter names no ids (the rest: `truncated`). */
export const BULK_MAX_RUNS = 10_000;
/** `filter.ids` holds at most this many. */
export const BULK_MAX_IDS = 1000;
/** Runs handled by one activity call. */
export const BULK_PAGE_SIZE = 50;

export interface BulkFilter {
  status?: RunStatus | RunStatus[];
  /** '@scope/name' */
  packageId?: string;
  createdAfter?: string;
  createdBefore?: string;
  ids?: string[];
}

export interface BulkJobRow {
  id: string;
  org_id: string;
  space_id: string;
  kind: BulkKind;
  status: BulkJobStatus;
  filter: BulkFilter;
  audience: RunAudience['only'];
  actor_type: RunRow['actor_type'];
  actor_id: string;
  user_id: string | null;
  end_user_id: string | null;
  total: number | null;
  truncated: boolean;
  processed: number;
  succeeded: number;
  failed: number;
  skipped: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export function newBulkJobId(): string {
  return `bulk_${randomBase62(24)}`;
}

/** The run a replay item launches: derived from job and run, so a retried page finds it. */
export function replayRunId(jobId: string, runId: string): string {
  return `run_${deterministicEventId(`bulk:${jobId}:${runId}`).slice('evt_'.length)}`;
}

export function jobAudience(job: Pick<BulkJobRow, 'org_id' | 'space_id' | 'audience'>): RunAudience {
  return { orgId: job.org_id, spaceId: job.space_id, only: job.audience };
}

/** The runs of the filter that the job's creator may read, oldest first. */
export function filteredRuns(knex: Knex, audience: RunAudience, f: BulkFilter): Knex.QueryBuilder {
  const q = runsVisibleTo(knex, audience);
  if (f.status !== undefined) q.whereIn('r.status', Array.isArray(f.status) ? f.status : [f.status]);
  if (f.packageId !== undefined) {
    const [scope, name] = f.packageId.split('/');
    q.where({ 'p.scope': scope, 'p.name': name ?? '' });
  }
  if (f.createdAfter !== undefined) q.where('r.created_at', '>', new Date(f.createdAfter));
  if (f.createdBefore !== undefined) q.where('r.created_at', '<', new Date(f.createdBefore));
  if (f.ids !== undefined) q.whereIn('r.id', f.ids);
  return q;
}

export interface BulkFailure {
  runId: string;
  code: string;
  detail: string;
}

/** The first failures listed on a job. */
export const BULK_FAILURES_SHOWN = 20;

export async function bulkFailures(knex: Knex, jobId: string): Promise<BulkFailure[]> {
  const rows = await knex('bulk_job_items')
    .where({ job_id: jobId, status: 'failed' })
    .orderBy('seq')
    .limit(BULK_FAILURES_SHOWN)
    .select('run_id', 'code', 'detail');
  return rows.map((r) => ({ runId: r.run_id, code: r.code, detail: r.detail }));
}

/** Recounts a job's progress from its items (so a repeated page never counts twice). */
export async function recountBulkJob(knex: Knex, jobId: string): Promise<void> {
  const c = await knex('bulk_job_items')
    .where({ job_id: jobId })
    .first(
      knex.raw(`count(*) filter (where status <> 'queued')::int as processed`),
      knex.raw(`count(*) filter (where status = 'succeeded')::int as succeeded`),
      knex.raw(`count(*) filter (where status = 'failed')::int as failed`),
      knex.raw(`count(*) filter (where status = 'skipped')::int as skipped`),
    );
  await knex('bulk_jobs').where({ id: jobId }).update({ processed: c.processed, succeeded: c.succeeded, failed: c.failed, skipped: c.skipped });
}
