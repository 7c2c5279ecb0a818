// File expiry (DESIGN.md 7): the `sweep-expired-files` Temporal Schedule
// (shared/files/sweep-schedule.ts) starts sweepExpiredFiles on `platform`, its workflow id the
// schedule's (Temporal appends the fire time).
import type { ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import type { sweepExpiredFiles } from '../../workflows/sweep-expired-files.ts';
import { PLATFORM_TASK_QUEUE } from '../contract/queues.ts';

export function sweepExpiredFilesAction(scheduleId: string): ScheduleOptionsStartWorkflowAction<typeof sweepExpiredFiles> {
  return {
    type: 'startWorkflow',
    workflowType: 'sweepExpiredFiles',
    taskQueue: PLATFORM_TASK_QUEUE,
    workflowId: scheduleId,
    args: [{}],
  };
}
