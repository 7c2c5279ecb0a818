// The one Temporal Schedule behind file expiry (DESIGN.md 7), visible in the Temporal UI as
// `sweep-expired-files`: every FILE_SWEEP_INTERVAL_SECONDS (an hour by default) it starts
// `sweepExpiredFiles` on the `platform` task queue. Every worker ensures it at start: created
// when missing, otherwise updated to this definition, so a changed interval takes effect.
import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Config } from '../config.ts';
import { PLATFORM_TASK_QUEUE } from '../events/publish.ts';

export const FILE_SWEEP_SCHEDULE_ID = 'sweep-expired-files';
export const SWEEP_EXPIRED_FILES_WORKFLOW = 'sweepExpiredFiles';

function definition(config: Pick<Config, 'fileSweepIntervalSeconds'>) {
  return {
    spec: { intervals: [{ every: `${config.fileSweepIntervalSeconds} seconds` as const }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: SWEEP_EXPIRED_FILES_WORKFLOW,
      taskQueue: PLATFORM_TASK_QUEUE,
      // Temporal appends the fire time.
      workflowId: FILE_SWEEP_SCHEDULE_ID,
      args: [{}],
    },
    // One sweep at a time; a sweep missed during an outage is not replayed (the next one catches up).
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
    state: { note: 'Deletes expired files and lapsed uploads (DESIGN.md 7)' },
  };
}

export async function ensureFileSweepSchedule(workflows: Client, config: Pick<Config, 'fileSweepIntervalSeconds'>): Promise<void> {
  try {
    await workflows.schedule.create({ scheduleId: FILE_SWEEP_SCHEDULE_ID, ...definition(config) });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    const wanted = definition(config);
    await workflows.schedule.getHandle(FILE_SWEEP_SCHEDULE_ID).update((prev) => ({ ...prev, spec: wanted.spec, action: wanted.action, policies: wanted.policies }));
  }
}
