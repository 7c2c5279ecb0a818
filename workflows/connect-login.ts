// connectLogin (DESIGN.md 2 and 7, workflow id `connect:<cat id>`, queue `platform`): one connect
// attempt. Its input and result hold ids and outcomes only: the submitted fields stay sealed in
// Postgres, so they never appear in the workflow's history.
import { proxyActivities } from '@temporalio/workflow';
import type { createConnectLoginActivity } from '../activities/connect-login.ts';
import type { ConnectLoginInput, ConnectLoginResult } from '../temporal/contract/workflows.ts';

const { performConnectLogin } = proxyActivities<ReturnType<typeof createConnectLoginActivity>>({
  startToCloseTimeout: '25 seconds',
  // Sending a login twice could lock an account or spend a one-time code: one try.
  retry: { maximumAttempts: 1 },
});

export async function connectLogin(input: ConnectLoginInput): Promise<ConnectLoginResult> {
  return performConnectLogin(input);
}
