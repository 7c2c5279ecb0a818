// purgeInlinePackage (DESIGN.md 2, workflow id `purge:<package id>`): started with the inline
// run, it sleeps `retention_days` on a durable timer, then empties the temporary package. A
// run still live at that point postpones the purge by an hour, as often as needed (runs end
// within the timeout ceiling).
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { createPurgeInlinePackageActivity, PurgeOutcome } from '../activities/purge-inline-package.ts';
import type { PurgeInlinePackageInput } from '../temporal/contract/workflows.ts';

export const BUSY_RETRY = '1 hour';

const activities = proxyActivities<ReturnType<typeof createPurgeInlinePackageActivity>>({
  // A database transaction; retried with Temporal's default backoff (the activity is idempotent).
  startToCloseTimeout: '1 minute',
});

export async function purgeInlinePackage(input: PurgeInlinePackageInput): Promise<Exclude<PurgeOutcome, 'busy'>> {
  await sleep(`${input.retentionDays} days`);
  for (;;) {
    const outcome = await activities.purgeInlinePackage({ packageId: input.packageId });
    if (outcome !== 'busy') return outcome;
    await sleep(BUSY_RETRY);
  }
}
