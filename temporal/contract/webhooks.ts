// What the webhooks module's workflows accept from outside: deliverWebhook's `retryNow` (replays,
// shared/webhooks/replay.ts) and the outbox's `deliver` signal and `held` query (the publisher,
// shared/events/publish.ts, and replays). Defined once for the workflows and their callers; only
// @temporalio/workflow's definitions here, so the workflow bundle includes this file.
import { defineQuery, defineSignal } from '@temporalio/workflow';

/** deliverWebhook: attempt now instead of waiting out the ladder's current wait. */
export const retryNow = defineSignal('retryNow');

export interface OutboxDeliverSignal {
  eventIds: string[];
  /**
   * Events whose first attempt their publisher still has open (activities/webhooks/first-attempt.ts):
   * the outbox sends them no sooner than this (epoch ms), and skips those recorded by then.
   */
  notBefore?: Record<string, number>;
}

/** webhookOutbox: events to deliver to the outbox's webhook (a repeated one is ignored). */
export const outboxDeliver = defineSignal<[OutboxDeliverSignal]>('deliver');

/** Event ids one `deliver` signal carries at most (publishers coalesce concurrent events). */
export const OUTBOX_SIGNAL_MAX_EVENTS = 500;

/** webhookOutbox: the event ids it holds (waiting for their first attempt, or in it). */
export const outboxHeld = defineQuery<string[]>('held');
