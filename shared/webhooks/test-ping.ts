// `test.ping` (SPEC 4.9): one signed delivery to one webhook, sent even when it is disabled.
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { startDeliverWebhookWorkflow } from '../../temporal/starters/deliver-webhook.ts';
import { storeEvent } from '../events/publish.ts';
import { newId } from '../ids.ts';
import { envelopeBody } from './payload.ts';

/** Stores the event, queues its single attempt, and returns the envelope that will be sent. */
export async function sendTestPing(
  knex: Knex,
  workflows: Client,
  hook: { id: string; org_id: string; space_id: string | null; payload_mode: 'full' | 'summary' },
): Promise<{ eventId: string; payload: unknown }> {
  const event = {
    id: newId('evt'),
    type: 'test.ping',
    orgId: hook.org_id,
    spaceId: hook.space_id,
    packageId: null,
    object: { object: 'webhook', id: hook.id, message: 'This is a test event.' },
    occurredAt: new Date(),
  };
  await storeEvent(knex, event);
  await startDeliverWebhookWorkflow(workflows, { eventId: event.id, webhookId: hook.id, single: true }, 'first');
  const body = envelopeBody(
    {
      id: event.id,
      type: event.type,
      org_id: event.orgId,
      space_id: event.spaceId,
      package_id: null,
      data: { object: event.object },
      occurred_at: event.occurredAt,
    },
    hook.payload_mode,
  );
  return { eventId: event.id, payload: JSON.parse(body) };
}
