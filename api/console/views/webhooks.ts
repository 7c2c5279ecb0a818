// How webhooks look on console pages: where a webhook listens, its delivery health over the last
// day (delivered of attempted, p95 latency, attempts per event), and a delivery's result.
import type { Knex } from 'knex';
import type { WebhookDeliveryRow, WebhookRow } from '../../../shared/webhooks/model.ts';
import { type Html, html } from '../html.ts';

export interface WebhookHealth {
  attempts: number;
  delivered: number;
  events: number;
  p95: number | null;
  last: Date | null;
}

const DAY_MS = 86_400_000;

/** Each webhook's attempts of the last 24 hours, in one query over its deliveries. */
export async function webhookHealth(knex: Knex, ids: string[], now = Date.now()): Promise<Map<string, WebhookHealth>> {
  if (!ids.length) return new Map();
  const rows = await knex('webhook_deliveries')
    .whereIn('webhook_id', ids)
    .where('created_at', '>', new Date(now - DAY_MS))
    .groupBy('webhook_id')
    .select(
      'webhook_id',
      knex.raw('count(*)::int as attempts'),
      knex.raw("count(*) filter (where status = 'success')::int as delivered"),
      knex.raw('count(distinct event_id)::int as events'),
      knex.raw('percentile_cont(0.95) within group (order by latency_ms) as p95'),
      knex.raw('max(created_at) as last'),
    );
  return new Map(
    rows.map((r: any) => [
      r.webhook_id,
      { attempts: r.attempts, delivered: r.delivered, events: r.events, p95: r.p95 === null ? null : Number(r.p95), last: r.last },
    ]),
  );
}

/** "12 of 13 delivered (92%)", or that nothing was attempted. */
export function healthText(h: WebhookHealth | undefined): Html {
  if (!h?.attempts) return html`<span class="muted">No delivery</span>`;
  const rate = Math.round((h.delivered / h.attempts) * 100);
  const cls = h.delivered === h.attempts ? 'status-success' : h.delivered === 0 ? 'status-failed' : 'status-timeout';
  return html`<span class="badge ${cls}">${rate}%</span> ${h.delivered} of ${h.attempts} attempt${h.attempts === 1 ? '' : 's'} delivered`;
}

export function webhookLevel(hook: Pick<WebhookRow, 'level'>): string {
  return hook.level === 'org' ? 'Organization' : 'This space';
}

export function enabledBadge(hook: Pick<WebhookRow, 'enabled'>): Html {
  return hook.enabled ? html`<span class="badge status-success">Enabled</span>` : html`<span class="badge status-cancelled">Disabled</span>`;
}

/** A delivery attempt's result (a webhook's deliveries, a run's): delivered or failed, and the HTTP status answered. */
export function deliveryResult(status: WebhookDeliveryRow['status'], statusCode: number | null): Html {
  return html`<span class="badge ${status === 'success' ? 'status-success' : 'status-failed'}">${status === 'success' ? 'Delivered' : 'Failed'}</span>${
    statusCode
      ? html` \
<span class="muted">HTTP ${statusCode}</span>`
      : ''
  }`;
}
