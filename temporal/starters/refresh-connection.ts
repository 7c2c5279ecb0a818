// An OAuth 2 connection's token refreshes (DESIGN.md 7): refreshConnection on `platform` under
// `refresh:<conn id>`, started when a connection gets a refresh token. TERMINATE_EXISTING: a
// reconnect brings a new token, and the workflow sleeping on the old one's expiry gives way.
import type { Client } from '@temporalio/client';
import { PLATFORM_TASK_QUEUE } from '../contract/queues.ts';
import type { RefreshConnectionInput, RefreshConnectionWorkflow } from '../contract/workflows.ts';

export function refreshWorkflowId(connectionId: string): string {
  return `refresh:${connectionId}`;
}

export function startRefreshConnectionWorkflow(workflows: Client, input: RefreshConnectionInput) {
  return workflows.workflow.start<RefreshConnectionWorkflow>('refreshConnection', {
    taskQueue: PLATFORM_TASK_QUEUE,
    workflowId: refreshWorkflowId(input.connectionId),
    args: [input],
    workflowIdConflictPolicy: 'TERMINATE_EXISTING',
  });
}
