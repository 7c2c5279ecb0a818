// The webhooks the person may read from this space (GET /api/webhooks?spaceId=: the space's with
// webhooks:read, the organization's with org-webhooks:read), each with its delivery health over
// the last day. A webhook's page has its deliveries, the test ping, retries, replay and rotation.
import type { WebhookRow } from '../../../shared/webhooks/model.ts';
import { allowed, webhooksOf } from '../../resources/webhooks.ts';
import { formatDuration, formatTime } from '../format.ts';
import { html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage } from '../page.ts';
import { enabledBadge, healthText, webhookHealth, webhookLevel } from '../views/webhooks.ts';

export default definePage({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/webhooks',
  context: 'space',
  scope: 'webhooks:read',
  nav: { label: 'Webhooks', order: 60 },
  async handler(page) {
    const { ctx } = page;
    const { knex } = ctx.services;
    const { org, space, base } = page.space!;
    const [orgLevel, spaceLevel] = await Promise.all([allowed(ctx, 'org', null, 'read'), allowed(ctx, 'space', space.id, 'read')]);
    const hooks = (await webhooksOf(knex, org.id, { org: orgLevel, spaceId: spaceLevel ? space.id : null }).orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])) as WebhookRow[];
    const health = await webhookHealth(
      knex,
      hooks.map((h) => h.id),
    );
    const rows = hooks.map((h) => {
      const hh = health.get(h.id);
      return html`<tr id="webhook-${h.id}">
<td><a class="url" href="${base}/webhooks/${h.id}">${h.url}</a><span class="muted"> <code>${h.id}</code></span></td>
<td>${webhookLevel(h)}</td>
<td>${h.events.join(', ')}${h.package_id ? html` <span class="muted">(${h.package_id} only)</span>` : ''}</td>
<td>${enabledBadge(h)}</td>
<td>${healthText(hh)}</td>
<td class="num">${hh?.p95 !== undefined && hh.p95 !== null ? formatDuration(hh.p95) : '—'}</td>
<td>${hh?.last ? html`<time datetime="${hh.last.toISOString()}">${formatTime(hh.last)}</time>` : '—'}</td>
</tr>`;
    });
    const table = rows.length
      ? html`<table class="data"><caption class="visually-hidden">Webhooks, newest first</caption><thead><tr><th \
scope="col">Endpoint</th><th scope="col">Level</th><th scope="col">Events</th><th scope="col">State</th><th \
scope="col">Last 24 hours</th><th scope="col" class="num">p95 latency</th><th scope="col">Last delivery</th></tr>\
</thead><tbody>${rows}</tbody></table>`
      : html`<p class="empty">No webhook listens here yet. Create one with <code>POST /api/webhooks</code>; its deliveries show here.</p>`;
    sendConsolePage(page, {
      title: 'Webhooks',
      current: 'webhooks',
      body: html`<p class="lead">Where the events of ${space.name}${orgLevel ? ' and of the organization' : ''} are \
sent, and how their deliveries went.</p>${table}`,
    });
  },
});
