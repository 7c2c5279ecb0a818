// The delivery attempts of one run's events (run.started, run.success, ...) to the webhooks a
// person may read: a run page's "Deliveries". A run's events have ids derived from the run
// (`deterministicEventId('<run id>:<type>')`, activities/publish-run-event.ts), so they are
// found by id without reading the events table (webhook_deliveries.event_id is indexed,
// migration 028).
import type { Knex } from 'knex';
import { deterministicEventId, RUN_EVENT_TYPES } from '../events/publish.ts';
import { type WebhookDeliveryRow, webhookDeliveryDto } from './model.ts';

/** Which webhooks the reader may read: the space's (`webhooks:read` there), the organization's (`org-webhooks:read`). */
export interface DeliveryReader {
  spaceWebhooks: boolean;
  orgWebhooks: boolean;
}

export async function runDeliveries(knex: Knex, run: { id: string; org_id: string; space_id: string }, reader: DeliveryReader, limit = 100) {
  if (!reader.spaceWebhooks && !reader.orgWebhooks) return [];
  const eventIds = RUN_EVENT_TYPES.map((type) => deterministicEventId(`${run.id}:${type}`));
  const rows = (await knex('webhook_deliveries as d')
    .join('webhooks as w', 'w.id', 'd.webhook_id')
    .whereIn('d.event_id', eventIds)
    .where('w.org_id', run.org_id)
    .where((q) => {
      if (reader.spaceWebhooks) q.orWhere({ 'w.level': 'space', 'w.space_id': run.space_id });
      if (reader.orgWebhooks) q.orWhere('w.level', 'org');
    })
    .orderBy([
      { column: 'd.created_at', order: 'desc' },
      { column: 'd.id', order: 'desc' },
    ])
    .limit(limit)
    .select('d.*', 'w.url as webhook_url', 'w.id as webhook_id')) as (WebhookDeliveryRow & { webhook_url: string })[];
  return rows.map((r) => ({ ...webhookDeliveryDto(r), webhookId: r.webhook_id, webhookUrl: r.webhook_url }));
}
