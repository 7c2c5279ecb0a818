// A schedule's ticks (DESIGN.md 2): its Temporal Schedule (shared/schedules/temporal.ts) starts
// scheduledRun on `agent-runs` under `tick:<schedule id>`; Temporal appends each tick's time, so
// every tick is a workflow of its own (and the seed of its run's id).
import type { ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import { AGENT_RUNS_TASK_QUEUE } from '../contract/queues.ts';
import type { ScheduledRunWorkflow } from '../contract/workflows.ts';

type Action = ScheduleOptionsStartWorkflowAction<ScheduledRunWorkflow>;

/** `typedSearchAttributes`: the schedule's own, so operators find each tick by them too. */
export function scheduledRunAction(scheduleId: string, typedSearchAttributes: Action['typedSearchAttributes']): Action {
  return {
    type: 'startWorkflow',
    workflowType: 'scheduledRun',
    taskQueue: AGENT_RUNS_TASK_QUEUE,
    workflowId: `tick:${scheduleId}`,
    args: [{ scheduleId }],
    typedSearchAttributes,
  };
}
