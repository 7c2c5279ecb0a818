// Publishing an event: stored once under a deterministic id (a retried activity publishes the
// same event), then, for each matching webhook not yet attempted, the first attempt made by the
// publisher itself when it can (activities/webhooks/first-attempt.ts), else handed to the
// webhook's outbox (signal-with-start of webhookOutbox, which makes first attempts in batches and
// ignores a repeated event).
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { OUTBOX_SIGNAL_MAX_EVENTS } from '../../temporal/contract/webhooks.ts';
import { signalWebhookOutbox } from '../../temporal/starters/webhook-outbox.ts';
import { BASE62 } from '../ids.ts';
import type { RunRow } from '../runs/model.ts';

export const RUN_EVENT_TYPES = ['run.started', 'run.success', 'run.failed', 'run.timeout', 'run.cancelled', 'run.connection_missing'] as const;
export const WEBHOOK_EVENT_TYPES = RUN_EVENT_TYPES;

/** evt_ + 24 base62 characters derived from the key. */
export function deterministicEventId(key: string): string {
  const digest = createHash('sha256').update(key).digest();
  let out = '';
  for (let i = 0; i < 24; i++) out += BASE62[digest[i] % 62];
  return `evt_${out}`;
}

export interface NewEvent {
  id: string;
  type: string;
  orgId: string;
  spaceId: string | null;
  packageId: string | null;
  object: Record<string, unknown>;
  occurredAt: Date;
}

/** The minimal run object of SPEC 2.5, in full (payload modes trim it per webhook). */
export function runEventObject(run: RunRow & { scope: string; name: string }, ephemeral = false): Record<string, unknown> {
  const terminal = run.finished_at !== null;
  const o: Record<string, unknown> = {
    object: 'run',
    id: run.id,
    packageId: `${run.scope}/${run.name}`,
    status: run.status,
    input: run.input,
  };
  if (terminal) o.duration = run.started_at && run.finished_at ? run.finished_at.getTime() - run.started_at.getTime() : 0;
  if (run.status === 'success') o.result = run.result;
  if (['failed', 'timeout', 'cancelled'].includes(run.status)) o.error = run.error ?? '';
  if (ephemeral) o.package = { ephemeral: true };
  return o;
}

/**
 * A publisher's own first attempt of an event to one webhook (activities/webhooks/first-attempt.ts):
 * 'done' once recorded (or nothing was left to send), else the event goes to the outbox, which
 * makes it no sooner than `handOver` (epoch ms; 0: at once).
 */
export type FirstAttempt = (webhookId: string, eventId: string) => Promise<'done' | { handOver: number }>;

interface Enqueued {
  eventId: string;
  notBefore: number;
  resolve(): void;
  reject(err: unknown): void;
}
/** Per client and webhook: events waiting for the signal after the one in flight. */
const outboxQueues = new WeakMap<Client, Map<string, Enqueued[]>>();

/**
 * Hands the event to the webhook's outbox (signal-with-start: started if it is not running),
 * which makes its first attempt in a batch, at once or from `notBefore` (epoch ms). Resolves once
 * the signal holding it is accepted. Group commit: while one signal to a webhook's outbox is in
 * flight, the events that arrive for it wait and then go together in the next one (the first
 * goes at once: no added latency).
 */
export function enqueueDelivery(workflows: Client, eventId: string, webhookId: string, notBefore = 0): Promise<void> {
  const queues = outboxQueues.get(workflows) ?? new Map<string, Enqueued[]>();
  outboxQueues.set(workflows, queues);
  return new Promise<void>((resolve, reject) => {
    const waiting = queues.get(webhookId);
    if (waiting) {
      waiting.push({ eventId, notBefore, resolve, reject });
      return;
    }
    const queue: Enqueued[] = [{ eventId, notBefore, resolve, reject }];
    queues.set(webhookId, queue);
    void (async () => {
      while (queue.length) {
        const batch = queue.splice(0, OUTBOX_SIGNAL_MAX_EVENTS);
        try {
          const deferred = batch.filter((e) => e.notBefore > 0).map((e) => [e.eventId, e.notBefore] as const);
          await signalWebhookOutbox(
            workflows,
            webhookId,
            batch.map((e) => e.eventId),
            deferred.length ? Object.fromEntries(deferred) : undefined,
          );
          for (const e of batch) e.resolve();
        } catch (err) {
          for (const e of batch) e.reject(err);
        }
      }
      queues.delete(webhookId);
    })();
  });
}

export async function storeEvent(knex: Knex, e: NewEvent): Promise<void> {
  await knex('events')
    .insert({
      id: e.id,
      org_id: e.orgId,
      space_id: e.spaceId,
      type: e.type,
      package_id: e.packageId,
      data: JSON.stringify({ object: e.object }),
      occurred_at: e.occurredAt,
    })
    .onConflict('id')
    .ignore();
}

/**
 * How long the outbox waits before it looks at an event a repeated publish hands it: longer than
 * a first attempt may stay open (twice its timeout: HANDOVER_AFTER_MS, activities/webhooks/first-attempt.ts),
 * after which the outbox finds that attempt recorded and skips it, or makes it if it never was.
 */
export const REPEATED_PUBLISH_WAIT_MS = 30_000;

/**
 * Stores the event and delivers it to each enabled webhook subscribed to it: the first attempt
 * made here by `firstAttempt` when given and the event is new, else queued in the webhook's
 * outbox. A webhook with an attempt of the event recorded is left alone (a repeated publish: the
 * outbox would skip it, and its retries are deliverWebhook's). Resolves once each delivery is
 * recorded or held by an outbox.
 */
export async function publishEvent(knex: Knex, workflows: Client, e: NewEvent, opts: { firstAttempt?: FirstAttempt } = {}): Promise<number> {
  // One round trip: the event stored (once: a retried publish changes nothing, and `fresh` says
  // which publish stored it) and the enabled webhooks it concerns found (organization level, or
  // space level in its space; no package filter, or its package), each with whether it has an
  // attempt of it recorded.
  const { rows: hooks } = await knex.raw<{ rows: Array<{ id: string; fresh: boolean; attempted: boolean }> }>(
    `with stored as (
       insert into events (id, org_id, space_id, type, package_id, data, occurred_at) values (?, ?, ?, ?, ?, ?, ?)
       on conflict (id) do nothing
       returning id
     )
     select w.id, exists (select 1 from stored) as fresh,
       exists (select 1 from webhook_deliveries d where d.webhook_id = w.id and d.event_id = ?) as attempted
     from webhooks w
     where w.org_id = ? and w.enabled and ? = any(w.events)
       and (w.level = 'org' or (w.level = 'space' and w.space_id = ?))
       and (w.package_id is null or w.package_id = ?)`,
    [e.id, e.orgId, e.spaceId, e.type, e.packageId, JSON.stringify({ object: e.object }), e.occurredAt, e.id, e.orgId, e.type, e.spaceId, e.packageId],
  );
  await Promise.all(
    hooks.map(async (h) => {
      if (h.attempted) return;
      // A repeated publish may find an attempt of its own still open (handed over, or its worker
      // lost): the outbox, which holds such an event, decides.
      // A repeated publish while that attempt may still be open (not yet recorded) waits longer
      // than an attempt can take before the outbox looks, so the receiver never gets it twice.
      const first = h.fresh && opts.firstAttempt ? await opts.firstAttempt(h.id, e.id) : { handOver: h.fresh ? 0 : Date.now() + REPEATED_PUBLISH_WAIT_MS };
      if (first !== 'done') await enqueueDelivery(workflows, e.id, h.id, first.handOver);
    }),
  );
  return hooks.length;
}
