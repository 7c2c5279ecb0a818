// One connect attempt's workflow (DESIGN.md 7, shared/integrations/connect.ts): connectLogin on
// `platform` under `connect:<cat id>`, awaited by the API. Each attempt has an id of its own, so
// the default reuse policy never meets an earlier one.
import type { Client } from '@temporalio/client';
import type { ConnectLoginInput, ConnectLoginResult } from '../../shared/integrations/connect.ts';
import type { connectLogin } from '../../workflows/connect-login.ts';
import { PLATFORM_TASK_QUEUE } from '../contract/queues.ts';

/** Runs the attempt and answers its outcome; the workflow fails after `timeoutMs` (the caller's deadline). */
export function executeConnectLoginWorkflow(workflows: Client, input: ConnectLoginInput, timeoutMs: number): Promise<ConnectLoginResult> {
  return workflows.workflow.execute<typeof connectLogin>('connectLogin', {
    taskQueue: PLATFORM_TASK_QUEUE,
    workflowId: `connect:${input.attemptId}`,
    args: [input],
    workflowExecutionTimeout: timeoutMs,
  });
}
