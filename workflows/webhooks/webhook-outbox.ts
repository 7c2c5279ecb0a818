// webhookOutbox (SPEC 6.3, issue 18): the first attempts of one webhook's deliveries, batched.
// publishEvent signals `deliver` with event ids (signal-with-start: a closed or missing outbox
// starts again; events published at once in one process share a signal). The outbox sends what
// it holds in batches, each one activity (deliverWebhookBatch) that checks the destination once,
// signs and POSTs every event of the batch over kept-alive connections and records the attempts
// in one insert. Not a local activity: a workflow task stays open while its local activities
// run, and more than 100 signals buffered meanwhile make the server fail that task, undoing the
// batch. An attempt that failed and may be retried goes on in its own `deliverWebhook`
// (`delivery:<evt>:<wh>`, the rest of the ladder from attempt 2), started by the batch before it
// records the attempt; so replays, `retryNow` and the ladder's timings stay deliverWebhook's.
//
// At least once: an event is held from its signal until its batch completed; a batch cut off
// (its worker lost: no heartbeat) or failed (the database unreachable, ...) runs again, never
// dropped, and skips the events whose attempt was recorded meanwhile. An event whose publisher
// still has its first attempt open (`notBefore`, activities/webhooks/first-attempt.ts) is held
// until then and batched like the others, so it is skipped once that attempt is recorded. The
// outbox closes after a minute without events (and none waiting), and continues as new before
// its history grows long, carrying what it holds.
import { condition, continueAsNew, log, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { createWebhookDeliveryActivity } from '../../activities/webhooks/delivery.ts';
import { outboxDeliver, outboxHeld } from '../../temporal/contract/webhooks.ts';
import type { WebhookOutboxInput } from '../../temporal/contract/workflows.ts';

type DeliveryActivities = ReturnType<typeof createWebhookDeliveryActivity>;

/** Events one batch sends at most. */
export const OUTBOX_BATCH_MAX = 64;
/** Batches in flight at once (a slow receiver does not hold the others up). */
export const OUTBOX_MAX_BATCHES = 3;
/** Without events for this long the outbox closes (the next event starts it again). */
export const OUTBOX_IDLE_MS = 60_000;
/** History events after which the outbox continues as new (Temporal may suggest it earlier). */
export const OUTBOX_HISTORY_LIMIT = 5000;

const { deliverWebhookBatch } = proxyActivities<DeliveryActivities>({
  // Each request has 15 s (SPEC 6.3.1); a batch sends its requests side by side, then records.
  startToCloseTimeout: '2 minutes',
  // A batch heartbeats while its requests are open: a lost worker is noticed within this.
  heartbeatTimeout: '20 seconds',
  // A batch that failed as a whole is sent again, without end: its recorded events are skipped then.
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

export async function webhookOutbox(input: WebhookOutboxInput): Promise<void> {
  const pending: string[] = [...(input.pending ?? [])];
  /** Events waiting for their time (epoch ms), then pending. */
  const deferred = new Map(Object.entries(input.deferred ?? {}));
  /** Pending, waiting or in a batch: a repeated signal (a retried publish) adds nothing. */
  const holding = new Set([...pending, ...deferred.keys()]);
  let inFlight = 0;
  setHandler(outboxDeliver, ({ eventIds, notBefore }) => {
    for (const id of eventIds) {
      if (holding.has(id)) continue;
      holding.add(id);
      const at = notBefore?.[id];
      if (at !== undefined && at > Date.now()) deferred.set(id, at);
      else pending.push(id);
    }
  });
  /** Moves the waiting events whose time has come to pending; the next time one waits for, if any. */
  function releaseDue(): number | undefined {
    let next: number | undefined;
    for (const [id, at] of deferred) {
      if (at <= Date.now()) {
        deferred.delete(id);
        pending.push(id);
      } else next = Math.min(next ?? at, at);
    }
    return next;
  }
  setHandler(outboxHeld, () => [...holding]);

  async function send(batch: string[]): Promise<void> {
    try {
      await deliverWebhookBatch({ webhookId: input.webhookId, eventIds: batch });
    } catch (err) {
      // Only a cancelled or terminated outbox gets here (the batch itself retries without end).
      log.warn('webhook outbox batch ended without completing', { webhookId: input.webhookId, error: String(err) });
    } finally {
      inFlight--;
      for (const id of batch) holding.delete(id);
    }
  }

  for (;;) {
    const next = releaseDue();
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > OUTBOX_HISTORY_LIMIT) {
      await condition(() => inFlight === 0);
      await continueAsNew<typeof webhookOutbox>({ webhookId: input.webhookId, pending, ...(deferred.size ? { deferred: Object.fromEntries(deferred) } : {}) });
    }
    if (pending.length === 0 && inFlight === 0) {
      // Until an event comes (one to wait for too: its time may come sooner), the next waiting
      // one's time, or the idle minute.
      const waiting = deferred.size;
      await condition(() => pending.length > 0 || deferred.size !== waiting, next === undefined ? OUTBOX_IDLE_MS : Math.max(1, next - Date.now()));
      if (pending.length === 0 && deferred.size === 0) return; // idle: nothing held, nothing in flight
      continue;
    }
    await condition(() => (pending.length > 0 && inFlight < OUTBOX_MAX_BATCHES) || (pending.length === 0 && inFlight === 0));
    if (pending.length === 0) continue;
    inFlight++;
    void send(pending.splice(0, OUTBOX_BATCH_MAX));
  }
}
