// File expiry (DESIGN.md 7): the `sweep-expired-files` Temporal Schedule
// (shared/files/sweep-schedule.ts) starts sweepExpiredFiles on `platform`, its workflow id the
// schedule's (Temporal appends the fire time).
import type { ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import { PLATFORM_TASK_QUEUE } from '../contract/queues.ts';
import type { SweepExpiredFilesWorkflow } from '../contract/workflows.ts';

export function sweepExpiredFilesAction(scheduleId: string): ScheduleOptionsStartWorkflowAction<SweepExpiredFilesWorkflow> {
  return {
    type: 'startWorkflow',
    workflowType: 'sweepExpiredFiles',
    taskQueue: PLATFORM_TASK_QUEUE,
    workflowId: scheduleId,
    args: [{}],
  };
}
