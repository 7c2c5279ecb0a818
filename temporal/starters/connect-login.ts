// One connect attempt's workflow (DESIGN.md 7, shared/integrations/connect.ts): connectLogin on
// `platform` under `connect:<cat id>`, awaited by the API. Each attempt has an id of its own, so
// the default reuse policy never meets an earlier one.
import type { Client } from '@temporalio/client';
import { PLATFORM_TASK_QUEUE } from '../contract/queues.ts';
import type { ConnectLoginInput, ConnectLoginResult, ConnectLoginWorkflow } from '../contract/workflows.ts';

/** Runs the attempt and answers its outcome; the workflow fails after `timeoutMs` (the caller's deadline). */
export function executeConnectLoginWorkflow(workflows: Client, input: ConnectLoginInput, timeoutMs: number): Promise<ConnectLoginResult> {
  return workflows.workflow.execute<ConnectLoginWorkflow>('connectLogin', {
    taskQueue: PLATFORM_TASK_QUEUE,
    workflowId: `connect:${input.attemptId}`,
    args: [input],
    workflowExecutionTimeout: timeoutMs,
  });
}
