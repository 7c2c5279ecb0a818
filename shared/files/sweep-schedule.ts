// The one Temporal Schedule behind file expiry (DESIGN.md 7), visible in the Temporal UI as
// `sweep-expired-files`: every FILE_SWEEP_INTERVAL_SECONDS (an hour by default) it starts
// `sweepExpiredFiles` on the `platform` task queue. Every worker ensures it at start: created
// when missing, otherwise updated to this definition, so a changed interval takes effect.
import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import { sweepExpiredFilesAction } from '../../temporal/starters/sweep-expired-files.ts';
import type { Config } from '../config.ts';

export const FILE_SWEEP_SCHEDULE_ID = 'sweep-expired-files';

function definition(config: Pick<Config, 'fileSweepIntervalSeconds'>) {
  return {
    spec: { intervals: [{ every: `${config.fileSweepIntervalSeconds} seconds` as const }] },
    action: sweepExpiredFilesAction(FILE_SWEEP_SCHEDULE_ID),
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
    await workflows.schedule
      .getHandle(FILE_SWEEP_SCHEDULE_ID)
      .update((prev) => ({ ...prev, spec: wanted.spec, action: wanted.action, policies: wanted.policies }));
  }
}
