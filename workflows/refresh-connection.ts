// refreshConnection (DESIGN.md 7, workflow id `refresh:<conn id>`, queue `platform`): one per
// OAuth 2 connection with a refresh token. Sleeps until a quarter of the token's life before it
// expires (at most five minutes early), refreshes, and goes on; stops when the connection is
// gone, has no refresh token, or the provider refused (the activity then set
// `needs_reconnection`). Its history holds ids and times only. A reconnect restarts it.
import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { createOAuth2Activities } from '../activities/oauth2.ts';
import type { RefreshConnectionInput } from '../temporal/contract/workflows.ts';

const { planConnectionRefresh } = proxyActivities<ReturnType<typeof createOAuth2Activities>>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 10, initialInterval: '1 second', maximumInterval: '1 minute' },
});
const { refreshConnectionToken } = proxyActivities<ReturnType<typeof createOAuth2Activities>>({
  startToCloseTimeout: '30 seconds',
  // An unreachable provider is retried; a refusal is an outcome, not an error.
  retry: { maximumAttempts: 8, initialInterval: '2 seconds', maximumInterval: '2 minutes' },
});

const REFRESHES_PER_RUN = 50;

export async function refreshConnection(input: RefreshConnectionInput): Promise<string> {
  for (let i = 0; i < REFRESHES_PER_RUN; i++) {
    const plan = await planConnectionRefresh(input);
    if (plan.action === 'stop') return plan.reason;
    const wait = plan.at - Date.now();
    if (wait > 0) await sleep(wait);
    let outcome: string;
    try {
      outcome = await refreshConnectionToken({ ...input, expiresAt: plan.expiresAt });
    } catch {
      // The provider stayed unreachable through every retry: try again at the next plan.
      await sleep('1 minute');
      continue;
    }
    if (outcome === 'refused' || outcome === 'gone') return outcome;
  }
  return continueAsNew<typeof refreshConnection>(input);
}
