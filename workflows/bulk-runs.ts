// bulkRuns (shared/runs/bulk.ts): a bulk cancel or replay job on the `platform` task queue,
// workflow id `bulk:<job id>`. The snapshot of the filter is taken once, then pages of runs are
// handled by activities that record each item; a worker restart resumes at the next queued item.
// A replay refused by the organization's run limits (SPEC 8.3) waits as long as the limit says
// and tries again; after BULK_LIMIT_PATIENCE without progress the refused items fail instead.
import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { createBulkRunsActivities } from '../activities/bulk-runs.ts';
import type { BulkRunsInput } from '../temporal/contract/workflows.ts';

type BulkActivities = ReturnType<typeof createBulkRunsActivities>;

/** How long a replay waits on the run limits without progress before refused items fail. */
export const BULK_LIMIT_PATIENCE_MS = 30 * 60 * 1000;
/** Pages per workflow run before continuing as new (keeps the history short). */
const PAGES_PER_RUN = 200;

const { prepareBulkJob, processBulkPage, finishBulkJob } = proxyActivities<BulkActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function bulkRuns(input: BulkRunsInput): Promise<void> {
  await prepareBulkJob(input.jobId);
  let waited = input.waitedMs ?? 0;
  for (let page = 0; page < PAGES_PER_RUN; page++) {
    const r = await processBulkPage({ jobId: input.jobId, giveUpOnLimits: waited >= BULK_LIMIT_PATIENCE_MS });
    if (r.done) {
      await finishBulkJob(input.jobId);
      return;
    }
    if (r.handled > 0) waited = 0;
    if (r.limitedForSeconds) {
      await sleep(r.limitedForSeconds * 1000);
      waited += r.limitedForSeconds * 1000;
    }
  }
  await continueAsNew<typeof bulkRuns>({ jobId: input.jobId, waitedMs: waited });
}
