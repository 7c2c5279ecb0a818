// deliverWebhook (SPEC 6.3): one activity call per attempt, no Temporal-level retries, and the
// durable ladder of waits between failed attempts. A restart of API or worker loses nothing.
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { AttemptOutcome, createWebhookDeliveryActivity } from '../../activities/webhooks/delivery.ts';

type DeliveryActivities = ReturnType<typeof createWebhookDeliveryActivity>;

/** Waits after failed attempts 1..7; at most 8 attempts in all. */
export const RETRY_WAITS = ['30 seconds', '5 minutes', '30 minutes', '1 hour', '2 hours', '3 hours', '4 hours'] as const;
export const MAX_ATTEMPTS = 8;
/** A host that does not resolve is abandoned at this attempt. */
export const UNRESOLVABLE_ABANDON_AT = 3;

export interface DeliverWebhookInput {
  eventId: string;
  webhookId: string;
  /** test.ping: one attempt, never retried. */
  single?: boolean;
}

const { deliverWebhookAttempt } = proxyActivities<DeliveryActivities>({
  // 15 s for the request itself (SPEC 6.3.1) plus signing, resolving and recording.
  startToCloseTimeout: '45 seconds',
  retry: { maximumAttempts: 1 },
});

export async function deliverWebhook(input: DeliverWebhookInput): Promise<string> {
  const max = input.single ? 1 : MAX_ATTEMPTS;
  for (let attempt = 1; attempt <= max; attempt++) {
    let outcome: AttemptOutcome;
    try {
      outcome = await deliverWebhookAttempt({ eventId: input.eventId, webhookId: input.webhookId, attempt });
    } catch {
      outcome = 'retry'; // the worker died mid-attempt or the activity failed: the attempt counts
    }
    if (outcome === 'success' || outcome === 'permanent' || outcome === 'gone') return outcome;
    if (outcome === 'unresolvable' && attempt >= UNRESOLVABLE_ABANDON_AT) return 'abandoned';
    if (attempt < max) await sleep(RETRY_WAITS[attempt - 1]);
  }
  return input.single ? 'failed' : 'exhausted';
}
