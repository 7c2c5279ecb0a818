// sweepExpiredFiles (DESIGN.md 7): started every hour by the `sweep-expired-files` Temporal
// Schedule (shared/files/sweep-schedule.ts) on the `platform` task queue; deletes expired files
// and lapsed uploads batch by batch until none is left.
import { proxyActivities } from '@temporalio/workflow';
import type { createSweepExpiredFilesActivities, SweepBatchResult } from '../activities/sweep-expired-files.ts';
import type { SweepExpiredFilesInput } from '../temporal/contract/workflows.ts';

const activities = proxyActivities<ReturnType<typeof createSweepExpiredFilesActivities>>({
  // A batch is a transaction plus storage deletes; idempotent, so retried with the default backoff.
  startToCloseTimeout: '5 minutes',
});

/** Batches per run at most; the next hourly run takes what is left (keeps the history short). */
const MAX_BATCHES = 500;

export async function sweepExpiredFiles(input: SweepExpiredFilesInput = {}): Promise<{ files: number; uploads: number }> {
  const total = { files: 0, uploads: 0 };
  for (let i = 0; i < MAX_BATCHES; i++) {
    const r: SweepBatchResult = await activities.sweepExpiredFilesBatch({ limit: input.limit });
    total.files += r.files;
    total.uploads += r.uploads;
    if (!r.more) break;
  }
  return total;
}
