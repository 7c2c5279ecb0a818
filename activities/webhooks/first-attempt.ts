// An event's first attempt made by its publisher (issue 33): a run's terminal status reached
// its receiver 40 to 80 ms after it was written when every first attempt went through the
// outbox (a signal, a workflow task and an activity task: three Temporal round trips before the
// POST). The publisher's process (a worker: runAgent's publishRunEvent, or executeAgent as soon as
// it wrote a status) now makes the attempt itself with the outbox's own batch of one (same
// checks, signature, record, ladder), while it is not busy; past FIRST_ATTEMPTS_AT_ONCE attempts
// in flight, events go to the outbox, which batches them as before.
//
// Durable as before: the publisher returns once the attempt is recorded (or the webhook is
// gone), else once the outbox holds the event. An attempt still open after FIRST_ATTEMPT_WAIT_MS
// (a slow receiver) goes on, and its event is handed to the outbox not before HANDOVER_AFTER_MS
// from the attempt's start: by then the attempt is recorded (the outbox's batch skips it) or its
// worker was lost (the outbox sends it, as attempt 1 again, same webhook-id).
import type { FirstAttempt } from '../../shared/events/publish.ts';
import { ATTEMPT_TIMEOUT_MS, type DeliveryDeps, webhookDelivery } from './delivery.ts';

/** How long a publisher waits for its attempt before handing the event to the outbox. */
export const FIRST_ATTEMPT_WAIT_MS = 500;
/** First attempts one process has in flight at most; beyond, events go to their outbox at once (a burst is batched). */
export const FIRST_ATTEMPTS_AT_ONCE = 16;
/** The outbox takes over a slow attempt no sooner than this after it began (its POST times out at 15 s). */
export const HANDOVER_AFTER_MS = 2 * ATTEMPT_TIMEOUT_MS;

const made = new WeakMap<DeliveryDeps, FirstAttempt>();

/** The first-attempt maker of a worker's deps (one per process: one count of attempts in flight). */
export function webhookFirstAttempts(deps: DeliveryDeps): FirstAttempt {
  let first = made.get(deps);
  if (!first) {
    first = createFirstAttempts(webhookDelivery(deps).deliverBatch);
    made.set(deps, first);
  }
  return first;
}

function createFirstAttempts(deliverBatch: ReturnType<typeof webhookDelivery>['deliverBatch']): FirstAttempt {
  let inFlight = 0;
  return async (webhookId, eventId) => {
    if (inFlight >= FIRST_ATTEMPTS_AT_ONCE) return { handOver: 0 };
    inFlight++;
    const began = Date.now();
    const attempt = deliverBatch({ webhookId, eventIds: [eventId] }).finally(() => {
      inFlight--;
    });
    let timer: NodeJS.Timeout | undefined;
    const slow = new Promise<'slow'>((resolve) => {
      timer = setTimeout(() => resolve('slow'), FIRST_ATTEMPT_WAIT_MS);
    });
    const outcome = await Promise.race([
      attempt.then(
        () => 'done' as const,
        () => 'failed' as const,
      ),
      slow,
    ]);
    clearTimeout(timer);
    if (outcome === 'done') return 'done';
    // Failed (the database, most likely): nothing is in flight any more, the outbox sends it now.
    if (outcome === 'failed') return { handOver: 0 };
    attempt.catch(() => undefined); // settles later; the outbox covers a failure
    return { handOver: began + HANDOVER_AFTER_MS };
  };
}
