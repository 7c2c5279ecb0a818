// deliverWebhook (SPEC 6.3): one activity call per attempt, no Temporal-level retries, and the
// durable ladder of waits between failed attempts. A restart of API or worker loses nothing.
// Replays (POST /api/webhooks/{id}/deliveries/{deliveryId}/retry, .../replay) start it again
// under the same workflow id once the previous one closed: a single attempt numbered after the
// last recorded one. The `retryNow` signal cuts the current wait short (a retry asked for while
// the ladder is waiting); one arriving during the last attempt earns one more attempt.
// A first attempt that the webhook's outbox made (webhook-outbox.ts) and that failed goes on
// here with `continueAt`: attempt 2 at the ladder's first wait after it, then the rest of the
// ladder as if this workflow had made attempt 1 (waits, cap and DNS abandonment count from 1).
import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { AttemptOutcome, createWebhookDeliveryActivity } from '../../activities/webhooks/delivery.ts';
import { retryNow } from '../../temporal/contract/webhooks.ts';
import type { DeliverWebhookInput } from '../../temporal/contract/workflows.ts';

type DeliveryActivities = ReturnType<typeof createWebhookDeliveryActivity>;

/** Waits after failed attempts 1..7; at most 8 attempts in all. */
export const RETRY_WAITS = ['30 seconds', '5 minutes', '30 minutes', '1 hour', '2 hours', '3 hours', '4 hours'] as const;
export const MAX_ATTEMPTS = 8;
/** A host that does not resolve is abandoned at this attempt. */
export const UNRESOLVABLE_ABANDON_AT = 3;

const { deliverWebhookAttempt } = proxyActivities<DeliveryActivities>({
  // 15 s for the request itself (SPEC 6.3.1) plus signing, resolving and recording.
  startToCloseTimeout: '45 seconds',
  retry: { maximumAttempts: 1 },
});

export async function deliverWebhook(input: DeliverWebhookInput): Promise<string> {
  let nudged = false;
  setHandler(retryNow, () => {
    nudged = true;
  });
  const first = input.firstAttempt ?? 1;
  const continued = input.continueAt !== undefined;
  let budget = input.single ? 1 : MAX_ATTEMPTS - (continued ? first - 1 : 0);
  if (continued) {
    const wait = (input.continueAt as number) - Date.now();
    if (wait > 0 && !nudged) await condition(() => nudged, wait);
  }
  for (let n = 0; ; n++) {
    const attempt = first + n;
    /** Attempts already made in this delivery's ladder. */
    const step = continued ? attempt - 1 : n;
    nudged = false;
    let outcome: AttemptOutcome;
    try {
      outcome = await deliverWebhookAttempt({ eventId: input.eventId, webhookId: input.webhookId, attempt });
    } catch {
      outcome = 'retry'; // the worker died mid-attempt or the activity failed: the attempt counts
    }
    if (outcome === 'success' || outcome === 'permanent' || outcome === 'gone') return outcome;
    if (outcome === 'unresolvable' && step + 1 >= UNRESOLVABLE_ABANDON_AT && !nudged) return 'abandoned';
    budget--;
    if (budget <= 0) {
      if (!nudged) return input.single ? 'failed' : 'exhausted';
      budget = 1;
    }
    if (!nudged) await condition(() => nudged, RETRY_WAITS[Math.min(step, RETRY_WAITS.length - 1)]);
  }
}
