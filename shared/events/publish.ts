// Publishing an event: stored once under a deterministic id (a retried activity publishes the
// same event), then handed to the outbox of each matching webhook (signal-with-start of
// webhookOutbox, which makes the first attempts in batches and ignores a repeated event).
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

interface Enqueued {
  eventId: string;
  resolve(): void;
  reject(err: unknown): void;
}
/** Per client and webhook: events waiting for the signal after the one in flight. */
const outboxQueues = new WeakMap<Client, Map<string, Enqueued[]>>();

/**
 * Hands the event to the webhook's outbox (signal-with-start: started if it is not running),
 * which makes its first attempt in a batch. Resolves once the signal holding it is accepted.
 * Group commit: while one signal to a webhook's outbox is in flight, the events that arrive for
 * it wait and then go together in the next one (the first goes at once: no added latency).
 */
export function enqueueDelivery(workflows: Client, eventId: string, webhookId: string): Promise<void> {
  const queues = outboxQueues.get(workflows) ?? new Map<string, Enqueued[]>();
  outboxQueues.set(workflows, queues);
  return new Promise<void>((resolve, reject) => {
    const waiting = queues.get(webhookId);
    if (waiting) {
      waiting.push({ eventId, resolve, reject });
      return;
    }
    const queue: Enqueued[] = [{ eventId, resolve, reject }];
    queues.set(webhookId, queue);
    void (async () => {
      while (queue.length) {
        const batch = queue.splice(0, OUTBOX_SIGNAL_MAX_EVENTS);
        try {
          await signalWebhookOutbox(workflows, webhookId, batch.map((e) => e.eventId));
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

/** Stores the event and queues a delivery to each enabled webhook subscribed to it. */
export async function publishEvent(knex: Knex, workflows: Client, e: NewEvent): Promise<number> {
  // One round trip: the event stored (once: a retried publish changes nothing) and the enabled
  // webhooks it concerns found (organization level, or space level in its space; no package
  // filter, or its package).
  const { rows: hooks } = await knex.raw<{ rows: Array<{ id: string }> }>(
    `with stored as (
       insert into events (id, org_id, space_id, type, package_id, data, occurred_at) values (?, ?, ?, ?, ?, ?, ?)
       on conflict (id) do nothing
     )
     select id from webhooks
     where org_id = ? and enabled and ? = any(events)
       and (level = 'org' or (level = 'space' and space_id = ?))
       and (package_id is null or package_id = ?)`,
    [e.id, e.orgId, e.spaceId, e.type, e.packageId, JSON.stringify({ object: e.object }), e.occurredAt, e.orgId, e.type, e.spaceId, e.packageId],
  );
  await Promise.all(hooks.map((h) => enqueueDelivery(workflows, e.id, h.id)));
  return hooks.length;
}
