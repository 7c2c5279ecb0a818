// scheduledRun (DESIGN.md section 2): started by a schedule's Temporal Schedule at each tick.
// Launches the run (which then goes through runAgent) or records a `failed` run for a tick that
// could not start and announces it as `run.failed` (SPEC 3.1).
import { proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { createPublishRunEventActivity } from '../activities/publish-run-event.ts';
import type { createScheduledTickActivities } from '../activities/scheduled-tick.ts';
import type { ScheduledRunInput } from '../temporal/contract/workflows.ts';

type TickActivities = ReturnType<typeof createScheduledTickActivities> & ReturnType<typeof createPublishRunEventActivity>;

// Short database work: local activities, retried by Temporal; both steps are idempotent.
const tick = proxyLocalActivities<TickActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 20 },
});

/** The run id of this tick, or null when none was due (schedule disabled or deleted). */
export async function scheduledRun(input: ScheduledRunInput): Promise<string | null> {
  const started = await tick.startScheduledRun({ scheduleId: input.scheduleId, tickId: workflowInfo().workflowId });
  if (started?.status === 'failed') await tick.publishRunEvent(started.runId, 'run.failed');
  return started?.runId ?? null;
}
