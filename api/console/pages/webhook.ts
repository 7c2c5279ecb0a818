// One webhook (what GET /api/webhooks/{id} and its deliveries show the person; one they may not
// read is the 404 page): where it sends what, its delivery attempts newest first with status,
// latency and attempt, and, with write access, a test ping, a retry per delivery, a replay of a
// window and the secret's rotation. A rotated secret is shown here once, right after the
// rotation (reveal.ts). The deliveries read themselves again for a minute after the page loads,
// as attempts arrive after a test, a retry or a replay.
import { ProblemError } from '../../../shared/errors.ts';
import type { WebhookDeliveryRow, WebhookRow } from '../../../shared/webhooks/model.ts';
import { DEFAULT_ROTATION_WINDOW_SECONDS } from '../../../shared/webhooks/rotate.ts';
import { cursorPage } from '../../pagination.ts';
import { allowed, webhookFor } from '../../resources/webhooks.ts';
import { formatDuration, formatTime } from '../format.ts';
import { actionButton, csrfField, errorSummary, type FieldErrors, type Option, selectField, textField } from '../forms.ts';
import { type Html, html, when } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, type PageContext } from '../page.ts';
import { takeRevealed } from '../reveal.ts';
import { localValue } from '../views/run-filters.ts';
import { deliveryResult, enabledBadge, healthText, webhookHealth, webhookLevel } from '../views/webhooks.ts';

type Params = { webhookId: string };

const PAGE_SIZE = 50;
const CURSOR = /^whd_[0-9A-Za-z]{1,64}$/;

export const ROTATION_WINDOWS: Option[] = [
  { value: '0', label: 'No time: only the new secret signs' },
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '1 day' },
  { value: String(DEFAULT_ROTATION_WINDOW_SECONDS), label: '7 days' },
  { value: String(30 * 86_400), label: '30 days' },
];

export interface ReplayForm {
  since?: string;
  until?: string;
  failed?: boolean;
  errors?: FieldErrors;
}

function cursorOf(raw: string | string[] | undefined): string | undefined {
  const v = Array.isArray(raw) ? raw[0] : raw;
  return v && CURSOR.test(v) ? v : undefined;
}

function revealed(hook: WebhookRow, secret: string | undefined): Html {
  if (!secret) return html``;
  return html`<section class="reveal" aria-labelledby="secret-heading">
<h2 id="secret-heading">New signing secret</h2>
<p><code id="webhook-secret" class="secret-value">${secret}</code> <button type="button" class="small secondary" \
data-controller="copy" data-copy-target="webhook-secret">Copy secret</button></p>
<p class="help">Shown this once: store it where your receiver verifies signatures \
now. ${
    hook.rotation_window_ends_at
      ? html`Until <time \
datetime="${hook.rotation_window_ends_at.toISOString()}">${formatTime(hook.rotation_window_ends_at)}</time> deliveries \
carry a signature by the previous secret too.`
      : ''
  }</p>
</section>`;
}

function actions(page: PageContext<Params>, hook: WebhookRow, replay: ReplayForm): Html {
  const url = `${page.space!.base}/webhooks/${hook.id}`;
  const since = replay.since ?? localValue(new Date(Math.floor(Date.now() / 60_000) * 60_000 - 86_400_000));
  return html`<section aria-labelledby="actions-heading">
<h2 id="actions-heading" class="visually-hidden">Actions</h2>
<div class="cards">
<div class="card"><h3>Test</h3><p class="help">Sends a signed <code>test.ping</code> now, even while the webhook is \
disabled; its attempt appears below.\
</p>${actionButton(page, { action: `${url}/test`, label: 'Send test ping', className: 'secondary' })}</div>
<div class="card"><h3 id="rotate-heading">Signing secret</h3>
<form method="post" action="${url}/rotate" class="stack" aria-labelledby="rotate-heading">${csrfField(page)}
${selectField({
  id: 'rotate-window',
  name: 'windowSeconds',
  label: 'Keep the previous secret signing for',
  value: String(DEFAULT_ROTATION_WINDOW_SECONDS),
  options: ROTATION_WINDOWS,
  help: 'Meanwhile every delivery carries both signatures, so receivers can switch without missing one.',
})}
<div><button type="submit" class="secondary">Rotate secret</button></div></form></div>
<div class="card"><h3 id="replay-heading">Replay</h3>
${errorSummary(replay.errors, 'The events could not be replayed')}
<form method="post" action="${url}/replay" class="stack" aria-labelledby="replay-heading">${csrfField(page)}
${textField({
  id: 'replay-since',
  name: 'since',
  label: 'Events since (UTC)',
  type: 'datetime-local',
  value: since,
  required: true,
  error: replay.errors?.['replay-since'],
})}
${textField({
  id: 'replay-until',
  name: 'until',
  label: 'Until (UTC)',
  type: 'datetime-local',
  value: replay.until,
  help: 'Empty: now.',
  error: replay.errors?.['replay-until'],
})}
<div class="field inline"><input type="checkbox" id="replay-failed" name="failed" \
value="yes"${when(replay.failed, ' checked')}><label for="replay-failed">Only events whose last delivery failed</label>\
</div>
<div><button type="submit" class="secondary">Replay events</button></div></form></div>
</div>
</section>`;
}

async function deliveries(page: PageContext<Params>, hook: WebhookRow, canWrite: boolean): Promise<Html> {
  const { ctx } = page;
  const url = `${page.space!.base}/webhooks/${hook.id}`;
  let after = cursorOf(page.query.startingAfter);
  let before = after ? undefined : cursorOf(page.query.endingBefore);
  const read = () =>
    cursorPage<WebhookDeliveryRow>(ctx, ctx.services.knex('webhook_deliveries').where({ webhook_id: hook.id }), {
      limit: PAGE_SIZE,
      startingAfter: after,
      endingBefore: before,
    });
  let listed: Awaited<ReturnType<typeof read>>;
  let gone: Html | string = '';
  try {
    listed = await read();
  } catch (err) {
    if (!(err instanceof ProblemError && err.code === 'validation_failed')) throw err;
    gone = html`<p class="note">That page of deliveries is gone: here are the newest.</p>`;
    after = before = undefined;
    listed = await read();
  }
  const { rows, hasMore } = listed;
  if (!rows.length)
    return html`${gone}<p class="empty" id="deliveries-empty">No delivery yet. Events the webhook listens to, a test \
ping or a replay show here as they are attempted.</p>`;
  const body = rows.map(
    (d) => html`<tr id="delivery-${d.id}" data-status="${d.status}">
<td><code>${d.event_type}</code><span class="muted"> <code>${d.event_id}</code></span></td>
<td>${deliveryResult(d.status, d.status_code)}</td>
<td class="num">${formatDuration(d.latency_ms)}</td>
<td class="num">${d.attempt}</td>
<td class="error-text">${d.error ?? ''}</td>
<td><time datetime="${d.created_at.toISOString()}">${formatTime(d.created_at)}</time></td>
<td class="actions">${
      canWrite && (hook.enabled || d.event_type === 'test.ping')
        ? actionButton(page, { action: `${url}/deliveries/${d.id}/retry`, label: 'Retry', className: 'small secondary' })
        : ''
    }</td>
</tr>`,
  );
  const backward = before !== undefined;
  const newer = after !== undefined || (backward && hasMore) ? html`<a href="${url}?endingBefore=${rows[0].id}#deliveries" rel="prev">← Newer</a>` : '';
  const older = backward || hasMore ? html`<a href="${url}?startingAfter=${rows[rows.length - 1].id}#deliveries" rel="next">Older →</a>` : '';
  return html`${gone}<table class="data"><caption class="visually-hidden">Delivery attempts, newest first</caption>\
<thead><tr><th scope="col">Event</th><th scope="col">Result</th><th scope="col" class="num">Latency</th><th scope="col" \
class="num">Attempt</th><th scope="col">Error</th><th scope="col">When</th><th scope="col"><span \
class="visually-hidden">Actions</span></th></tr></thead><tbody id="deliveries-rows">${body}</tbody></table>
${newer || older ? html`<nav class="pager" aria-label="Pages of deliveries">${newer}${older}</nav>` : ''}`;
}

/** The webhook's page; the replay form's refusal renders it again with what was typed and why. */
export async function renderWebhookPage(page: PageContext<Params>, o: { replay?: ReplayForm; status?: number } = {}): Promise<void> {
  const { ctx } = page;
  const hook = await webhookFor(ctx, page.params.webhookId, 'read');
  const canWrite = await allowed(ctx, hook.level, hook.space_id, 'write');
  const [health, list] = await Promise.all([webhookHealth(ctx.services.knex, [hook.id]), deliveries(page, hook, canWrite)]);
  const secret = takeRevealed(ctx, page.sessionId, `webhook:${hook.id}`);
  const base = page.space!.base;
  sendConsolePage(page, {
    title: `Webhook ${hook.id}`,
    status: o.status,
    current: 'webhooks',
    crumbs: [{ label: 'Webhooks', href: `${base}/webhooks` }, { label: hook.id }],
    heading: html`<h1 class="run-title">Webhook <code class="url">${hook.url}</code></h1>`,
    body: html`${revealed(hook, secret)}
<section class="run-summary" aria-label="Webhook">
<dl class="facts">
<div><dt>Id</dt><dd><code>${hook.id}</code></dd></div>
<div><dt>Level</dt><dd>${webhookLevel(hook)}</dd></div>
<div><dt>Events</dt><dd>${hook.events.join(', ')}</dd></div>
<div><dt>Agent</dt><dd>${hook.package_id ?? 'Any'}</dd></div>
<div><dt>Payload</dt><dd>${hook.payload_mode}</dd></div>
<div><dt>State</dt><dd>${enabledBadge(hook)}</dd></div>
<div><dt>Last 24 hours</dt><dd>${healthText(health.get(hook.id))}</dd></div>
<div><dt>Secret rotation</dt>\
<dd>${
      hook.rotation_window_ends_at && hook.rotation_window_ends_at.getTime() > Date.now()
        ? html`both secrets sign \
until <time datetime="${hook.rotation_window_ends_at.toISOString()}">${formatTime(hook.rotation_window_ends_at)}</time>`
        : 'one secret signs'
    }</dd>\
</div>
<div><dt>Created</dt><dd><time datetime="${hook.created_at.toISOString()}">${formatTime(hook.created_at)}</time></dd></div>
</dl>
</section>
${
  canWrite
    ? actions(page, hook, o.replay ?? {})
    : html`<p class="note">Testing, retrying, replaying and rotating \
need ${hook.level === 'org' ? 'org-webhooks:write' : 'webhooks:write'}.</p>`
}
<section id="deliveries" aria-labelledby="deliveries-heading">
<h2 id="deliveries-heading">Deliveries</h2>
<div id="deliveries-body" data-live-region data-controller="refresh" data-every="2000" data-for="60000">${list}</div>
</section>`,
  });
}

export default definePage<Params>({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/webhooks/:webhookId',
  context: 'space',
  scope: 'webhooks:read',
  handler: (page) => renderWebhookPage(page),
});
