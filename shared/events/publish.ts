// Publishing an event: stored once under a deterministic id (a retried activity publishes the
// same event), then one deliverWebhook workflow per matching webhook, started idempotently.
import { createHash } from 'node:crypto';
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Knex } from 'knex';
import { BASE62 } from '../ids.ts';
import type { RunRow } from '../runs/model.ts';

export const PLATFORM_TASK_QUEUE = 'platform';

export const RUN_EVENT_TYPES = ['run.started', 'run.success', 'run.failed', 'run.timeout', 'run.cancelled', 'run.connection_missing'] as const;
export const WEBHOOK_EVENT_TYPES = RUN_EVENT_TYPES;

/** evt_ + 24 base62 characters derived from the key. */
export function deterministicEventId(key: string): string {
  const digest = createHash('sha256').update(key).digest();
  let out = '';
  for (let i = 0; i < 24; i++) out += BASE62[digest[i] % 62];
  return `evt_${out}`;
}

export function deliveryWorkflowId(eventId: string, webhookId: string): string {
  return `delivery:${eventId}:${webhookId}`;
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

export async function startDelivery(workflows: Client, eventId: string, webhookId: string, single = false): Promise<void> {
  try {
    await workflows.workflow.start('deliverWebhook', {
      taskQueue: PLATFORM_TASK_QUEUE,
      workflowId: deliveryWorkflowId(eventId, webhookId),
      args: [{ eventId, webhookId, single }],
      // Idempotent even once it finished (a retried publish); replays reuse the id on purpose (shared/webhooks/replay.ts).
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
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

/** Stores the event and starts a delivery for each enabled webhook subscribed to it. */
export async function publishEvent(knex: Knex, workflows: Client, e: NewEvent): Promise<number> {
  await storeEvent(knex, e);
  const hooks = await knex('webhooks')
    .where({ org_id: e.orgId, enabled: true })
    .whereRaw('? = any(events)', [e.type])
    .where((w) => {
      w.where('level', 'org');
      if (e.spaceId) w.orWhere((s) => s.where({ level: 'space', space_id: e.spaceId }));
    })
    .where((w) => {
      w.whereNull('package_id');
      if (e.packageId) w.orWhere('package_id', e.packageId);
    })
    .select('id');
  for (const h of hooks) await startDelivery(workflows, e.id, h.id);
  return hooks.length;
}
