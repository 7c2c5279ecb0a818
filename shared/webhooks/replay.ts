// Replaying webhook deliveries (issue 19): a delivery's event sent again now, or every event of
// a window that a webhook subscribes to. Each replay is a `deliverWebhook` workflow under the
// usual id `delivery:<evt>:<wh>`, started with the ALLOW_DUPLICATE reuse policy (a closed
// delivery may run again) and the FAIL conflict policy (a running one is never doubled), as one
// attempt numbered after the last recorded attempt of that event to that webhook. An event the
// webhook's outbox still holds (its first attempt not made or not finished) is running too.
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import { outboxHeld, retryNow } from '../../temporal/contract/webhooks.ts';
import { deliveryWorkflowId, startDeliverWebhookWorkflow } from '../../temporal/starters/deliver-webhook.ts';
import { outboxWorkflowId } from '../../temporal/starters/webhook-outbox.ts';
import { problem } from '../errors.ts';
import { WEBHOOK_EVENT_TYPES } from '../events/publish.ts';

/** Events one replay call queues at most; the rest is left for a call from `nextSince`. */
export const REPLAY_MAX_EVENTS = 1000;
/** Deliveries started at once while a replay queues its events. */
const START_CONCURRENCY = 20;

export interface ReplayHook {
  id: string;
  org_id: string;
  level: 'space' | 'org';
  space_id: string | null;
  events: string[];
  package_id: string | null;
}

/** The attempt number that follows the recorded ones, per event. */
export async function nextAttempts(knex: Knex, webhookId: string, eventIds: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>(eventIds.map((id) => [id, 1]));
  for (let i = 0; i < eventIds.length; i += 500) {
    const rows = await knex('webhook_deliveries')
      .where({ webhook_id: webhookId })
      .whereIn('event_id', eventIds.slice(i, i + 500))
      .groupBy('event_id')
      .select('event_id', knex.raw('max(attempt)::int as last'));
    for (const r of rows) out.set(r.event_id, r.last + 1);
  }
  return out;
}

/** How long a replay waits for the outbox's answer (a worker answers the query). */
const OUTBOX_QUERY_MS = 5000;

/**
 * The events the webhook's outbox holds: first attempts not made or not finished. Empty when it
 * is not running, and when no worker answers in time (the replay then goes on without it).
 */
export async function heldByOutbox(workflows: Client, webhookId: string): Promise<Set<string>> {
  const handle = workflows.workflow.getHandle(outboxWorkflowId(webhookId));
  try {
    if ((await handle.describe()).status.name !== 'RUNNING') return new Set();
    return new Set(await workflows.connection.withDeadline(Date.now() + OUTBOX_QUERY_MS, () => handle.query(outboxHeld)));
  } catch {
    return new Set(); // never started, or no answer: the starts below still never double a running ladder
  }
}

/** Starts one attempt unless a delivery of the event to the webhook is running: 'started' or 'running'. */
export function startReplayDelivery(workflows: Client, eventId: string, webhookId: string, firstAttempt: number): Promise<'started' | 'running'> {
  return startDeliverWebhookWorkflow(workflows, { eventId, webhookId, single: true, firstAttempt }, 'again');
}

/**
 * Sends the event again now: a new single attempt, or, while its ladder is running (waiting
 * before its next attempt), a signal that makes it attempt at once. Never two at a time.
 */
export async function retryDeliveryNow(workflows: Client, eventId: string, webhookId: string, firstAttempt: number): Promise<'started' | 'running'> {
  for (let i = 0; i < 3; i++) {
    if ((await startReplayDelivery(workflows, eventId, webhookId, firstAttempt)) === 'started') return 'started';
    try {
      await workflows.workflow.getHandle(deliveryWorkflowId(eventId, webhookId)).signal(retryNow);
      return 'running';
    } catch (err) {
      // It closed between the two calls: start it again.
      if (!(err instanceof WorkflowNotFoundError) && !/already completed|not found/i.test((err as Error).message)) throw err;
    }
  }
  return 'running';
}

export interface ReplayWindow {
  since: Date;
  until: Date;
  /** Only events whose last delivery to this webhook failed. */
  failedOnly: boolean;
}

/** The events of the window the webhook subscribes to, oldest first, one more than the maximum. */
export async function eventsToReplay(knex: Knex, hook: ReplayHook, w: ReplayWindow): Promise<Array<{ id: string; occurred_at: Date }>> {
  const types = hook.events.filter((t) => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t));
  if (!types.length) return [];
  const q = knex('events as e')
    .where('e.org_id', hook.org_id)
    .where('e.occurred_at', '>=', w.since)
    .where('e.occurred_at', '<', w.until)
    .whereIn('e.type', types);
  if (hook.level === 'space') q.where('e.space_id', hook.space_id);
  if (hook.package_id) q.where('e.package_id', hook.package_id);
  if (w.failedOnly) {
    q.whereRaw(
      `(select d.status from webhook_deliveries d where d.webhook_id = ? and d.event_id = e.id order by d.attempt desc, d.created_at desc limit 1) = 'failed'`,
      [hook.id],
    );
  }
  return q
    .orderBy([
      { column: 'e.occurred_at', order: 'asc' },
      { column: 'e.id', order: 'asc' },
    ])
    .limit(REPLAY_MAX_EVENTS + 1)
    .select('e.id', 'e.occurred_at');
}

export interface ReplayResult {
  object: 'webhook_replay';
  webhookId: string;
  /** Events of the window considered (at most REPLAY_MAX_EVENTS). */
  matched: number;
  /** New single attempts started. */
  queued: number;
  /** Events whose delivery to this webhook was still running: nothing new queued for them. */
  alreadyRunning: number;
  truncated: boolean;
  /** With `truncated`: the `since` of the call that continues the window. */
  nextSince: string | null;
}

export async function replayWindow(knex: Knex, workflows: Client, hook: ReplayHook, w: ReplayWindow): Promise<ReplayResult> {
  const found = await eventsToReplay(knex, hook, w);
  const truncated = found.length > REPLAY_MAX_EVENTS;
  const events = found.slice(0, REPLAY_MAX_EVENTS);
  const attempts = await nextAttempts(
    knex,
    hook.id,
    events.map((e) => e.id),
  );
  const held = await heldByOutbox(workflows, hook.id);
  let queued = 0;
  let alreadyRunning = held.size ? events.filter((e) => held.has(e.id)).length : 0;
  const toStart = held.size ? events.filter((e) => !held.has(e.id)) : events;
  for (let i = 0; i < toStart.length; i += START_CONCURRENCY) {
    const outcomes = await Promise.all(toStart.slice(i, i + START_CONCURRENCY).map((e) => startReplayDelivery(workflows, e.id, hook.id, attempts.get(e.id)!)));
    for (const o of outcomes) {
      if (o === 'started') queued++;
      else alreadyRunning++;
    }
  }
  return {
    object: 'webhook_replay',
    webhookId: hook.id,
    matched: events.length,
    queued,
    alreadyRunning,
    truncated,
    nextSince: truncated ? found[REPLAY_MAX_EVENTS].occurred_at.toISOString() : null,
  };
}

/**
 * One delivery's event sent again now (`POST /api/webhooks/{id}/deliveries/{deliveryId}/retry`
 * and the console's retry button): 404 for a delivery of another webhook or an event no longer
 * stored, 409 while the webhook is disabled (except for `test.ping`).
 */
export async function retryDelivery(knex: Knex, workflows: Client, hook: { id: string; org_id: string; enabled: boolean }, deliveryId: string) {
  const delivery = await knex('webhook_deliveries').where({ id: deliveryId, webhook_id: hook.id }).first();
  if (!delivery) throw problem('not_found', 'No such delivery of this webhook');
  if (!hook.enabled && delivery.event_type !== 'test.ping') throw problem('conflict', 'The webhook is disabled: enable it before retrying its deliveries');
  const event = await knex('events').where({ id: delivery.event_id, org_id: hook.org_id }).first('id');
  if (!event) throw problem('not_found', "The delivery's event is no longer stored");
  const attempt = (await nextAttempts(knex, hook.id, [event.id])).get(event.id)!;
  const outcome = await retryDeliveryNow(workflows, event.id, hook.id, attempt);
  return {
    object: 'webhook_delivery_retry' as const,
    webhookId: hook.id,
    eventId: event.id as string,
    attempt: outcome === 'started' ? attempt : null,
    running: outcome === 'running',
  };
}

/**
 * Every event of `[since, until)` (until: now) sent again (`POST /api/webhooks/{id}/replay` and
 * the console's replay form): 400 naming the field when the window is empty, 409 while the
 * webhook is disabled.
 */
export async function replayWebhook(
  knex: Knex,
  workflows: Client,
  hook: ReplayHook & { enabled: boolean },
  req: { since: Date; until?: Date; failedOnly: boolean },
): Promise<ReplayResult> {
  const until = req.until ?? new Date();
  if (until <= req.since) {
    const message = req.until ? 'until must be later than since' : 'since must be in the past';
    const field = req.until ? 'until' : 'since';
    throw problem('validation_failed', { detail: message, errors: [{ field, code: 'invalid_value', message }] });
  }
  if (!hook.enabled) throw problem('conflict', 'The webhook is disabled: enable it before replaying events');
  return replayWindow(knex, workflows, hook, { since: req.since, until, failedOnly: req.failedOnly });
}
