// The names the webhook outbox (workflows/webhooks/webhook-outbox.ts) is reached by, shared by
// the workflow, the publisher (shared/events/publish.ts) and replays (replay.ts). No imports:
// the workflow bundle includes this file.

/** One outbox per webhook: the first attempts of its deliveries, batched. */
export function outboxWorkflowId(webhookId: string): string {
  return `webhook-outbox:${webhookId}`;
}

/** Signal: `{ eventIds }`, events to deliver to the outbox's webhook (a repeated one is ignored). */
export const OUTBOX_DELIVER_SIGNAL = 'deliver';

/** Event ids one `deliver` signal carries at most (publishers coalesce concurrent events). */
export const OUTBOX_SIGNAL_MAX_EVENTS = 500;

/** Query: the event ids the outbox holds (waiting for their first attempt, or in it). */
export const OUTBOX_HELD_QUERY = 'held';

export interface OutboxDeliverSignal {
  eventIds: string[];
}
