// The space's home: what an operator opens first. Over a period (`?period=`, the run list's
// periods), the runs the person may read by status in each slice, their failures, their spend
// and tokens, the p50/p95 duration (shared/runs/stats.ts), as SVG charts beside tables of the
// same figures, and the webhook deliveries of the last day. Each count is what GET /api/runs?status= counts for the person, limited to the
// period, and links to the run list showing exactly those runs.
import { RUN_SELECT, type RunRow } from '../../../shared/runs/model.ts';
import { runStats } from '../../../shared/runs/stats.ts';
import { runAudience, visibleRuns } from '../../resources/runs.ts';
import { allowed, webhooksOf } from '../../resources/webhooks.ts';
import { formatCost, formatCount, formatDuration } from '../format.ts';
import { selectField } from '../forms.ts';
import { type Html, html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, type PageContext } from '../page.ts';
import { PERIODS } from '../views/run-filters.ts';
import { runsChart, sliceLabel, spendChart, STACK } from '../views/overview.ts';
import { launcherLabel, launcherNames, runRow, statusLabel } from '../views/runs.ts';
import { webhookHealth } from '../views/webhooks.ts';

/** Slices of each period: five minutes in an hour, hours in a day, half days in a week, days in a month. */
const SLICES: Record<string, number> = { '1h': 300_000, '24h': 3_600_000, '7d': 43_200_000, '30d': 86_400_000 };
const DEFAULT_PERIOD = '24h';

function runsLink(page: PageContext, period: string, status?: string): string {
  const q = new URLSearchParams(status ? { status, period } : { period });
  return `${page.space!.base}/runs?${q}`;
}

async function recentFailures(page: PageContext, from: Date): Promise<Html> {
  const rows = (await visibleRuns(page.ctx)
    .whereIn('r.status', ['failed', 'timeout'])
    .where('r.created_at', '>', from)
    .select(RUN_SELECT)
    .orderBy([
      { column: 'r.created_at', order: 'desc' },
      { column: 'r.id', order: 'desc' },
    ])
    .limit(5)) as (RunRow & { scope: string; name: string })[];
  if (!rows.length) return html`<p class="empty">No failed or timed-out run in this period.</p>`;
  const names = await launcherNames(page.ctx.services.knex, page.space!.org.id, rows);
  const body = rows.map(
    (r) =>
      html`${runRow(page.space!.base, r, launcherLabel(names, r), html``)}${
        r.error
          ? html`<tr><td></td><td colspan="8" \
class="muted error-detail">${r.error}</td></tr>`
          : ''
      }`,
  );
  return html`<table class="data runs"><caption class="visually-hidden">Latest failures</caption><thead><tr><th \
scope="col">Status</th><th scope="col">Run</th><th scope="col">Agent</th><th scope="col">Launched by</th><th \
scope="col">Created</th><th scope="col" class="num">Duration</th><th scope="col" class="num">Tokens</th><th scope="col" \
class="num">Cost</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>\
<tbody>${body}</tbody></table>`;
}

/**
 * The webhook deliveries of the last 24 hours (the webhook list's health, summed over the
 * webhooks the person may read), or nothing without the webhooks module or their permission.
 */
async function webhookFigure(page: PageContext): Promise<{ attempts: number; delivered: number } | undefined> {
  const { ctx } = page;
  const { org, space } = page.space!;
  if (!ctx.services.config.modules.has('webhooks') || !page.space!.scopes.has('webhooks:read')) return undefined;
  const [orgLevel, spaceLevel] = await Promise.all([allowed(ctx, 'org', null, 'read'), allowed(ctx, 'space', space.id, 'read')]);
  const ids = (await webhooksOf(ctx.services.knex, org.id, { org: orgLevel, spaceId: spaceLevel ? space.id : null }).pluck('id')) as string[];
  const health = [...(await webhookHealth(ctx.services.knex, ids)).values()];
  return { attempts: health.reduce((n, h) => n + h.attempts, 0), delivered: health.reduce((n, h) => n + h.delivered, 0) };
}

export default definePage({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/overview',
  context: 'space',
  scope: 'runs:read',
  nav: { label: 'Overview', order: 10 },
  async handler(page) {
    const { ctx } = page;
    const raw = typeof page.query.period === 'string' ? page.query.period : '';
    const period = PERIODS[raw] ? raw : DEFAULT_PERIOD;
    const label = PERIODS[period].label;
    const to = new Date();
    const from = new Date(to.getTime() - PERIODS[period].ms);
    const [stats, failures, hooks] = await Promise.all([
      runStats(ctx.services.knex, runAudience(ctx), { from, to, bucketMs: SLICES[period] }),
      recentFailures(page, from),
      webhookFigure(page),
    ]);
    const failed = stats.totals.failed + stats.totals.timeout;
    const live = stats.totals.pending + stats.totals.running;
    const figure = (id: string, name: string, value: string, href?: string, note?: Html | string) =>
      html`<div class="figure" data-figure="${id}"><dt>${name}</dt><dd>${
        href
          ? html`<a href="${href}" \
class="value">${value}</a>`
          : html`<span class="value">${value}</span>`
      }${
        note
          ? html`<span \
class="help">${note}</span>`
          : ''
      }</dd></div>`;
    const totals = STACK.map(
      (s) =>
        html`<tr data-status="${s}"><th scope="row"><span class="swatch s-${s}" aria-hidden="true">\
</span>${statusLabel(s)}</th><td class="num"><a class="count" \
href="${runsLink(page, period, s)}">${formatCount(stats.totals[s])}</a></td></tr>`,
    );
    const perSlice = stats.buckets.map(
      (b) =>
        html`<tr><th scope="row">${sliceLabel(b.start, stats.bucketMs)}</th>${STACK.map(
          (s) => html`<td \
class="num">${b.counts[s] || ''}</td>`,
        )}<td class="num">${b.costUsd ? formatCost(b.costUsd) : ''}</td></tr>`,
    );
    const periods = Object.entries(PERIODS).map(([value, p]) => ({ value, label: p.label }));
    sendConsolePage(page, {
      title: 'Overview',
      current: 'overview',
      body: html`<form method="get" action="${page.space!.base}/overview" class="inline-fields" \
aria-label="Period">${selectField({ id: 'overview-period', name: 'period', label: 'Period', value: period, options: periods })}<button \
type="submit" class="secondary">Show</button></form>
<dl class="figures" id="overview-figures">
${figure('total', 'Runs', formatCount(stats.total), runsLink(page, period))}
${figure(
  'success',
  'Succeeded',
  formatCount(stats.totals.success),
  runsLink(page, period, 'success'),
  stats.total
    ? `${Math.round((stats.totals.success / stats.total) * 100)} \
% of the runs`
    : undefined,
)}
${figure(
  'failures',
  'Failures',
  formatCount(failed),
  runsLink(page, period, 'failed'),
  `${formatCount(stats.totals.failed)} \
failed, ${formatCount(stats.totals.timeout)} timed out`,
)}
${figure('live', 'Pending or running', formatCount(live), runsLink(page, period, 'running'))}
${figure('spend', 'Spend', formatCost(stats.costUsd), undefined, `${formatCount(stats.inputTokens)} tokens in, ${formatCount(stats.outputTokens)} out`)}
${figure('duration', 'Duration p50 / p95', `${formatDuration(stats.p50Ms)} / ${formatDuration(stats.p95Ms)}`, undefined, 'of the runs that ran to their end')}
${
  hooks
    ? figure(
        'webhooks',
        'Webhook deliveries',
        hooks.attempts
          ? `${Math.round((hooks.delivered / hooks.attempts) * 100)} \
%`
          : '—',
        `${page.space!.base}/webhooks`,
        `${formatCount(hooks.delivered)} of ${formatCount(hooks.attempts)} attempts \
delivered in the last 24 hours`,
      )
    : ''
}
</dl>
<section aria-labelledby="runs-chart-heading"><h2 id="runs-chart-heading">Runs by status</h2>
<div class="chart-with-table"><figure class="chart-figure">${runsChart(stats, label)}<figcaption><ul class="legend" \
aria-label="Legend">${STACK.map(
        (s) => html`<li><span class="swatch s-${s}" aria-hidden="true">\
</span>${statusLabel(s)}</li>`,
      )}</ul></figcaption></figure>
<table class="data totals" id="overview-totals"><caption>Runs created in the ${label.toLowerCase()}</caption>\
<tbody>${totals}<tr data-status="all"><th scope="row">All</th><td class="num"><a class="count" \
href="${runsLink(page, period)}">${formatCount(stats.total)}</a></td></tr></tbody></table></div>
<details><summary>The figures of each slice (UTC)</summary><table class="data slices"><caption \
class="visually-hidden">Runs and spend per slice</caption><thead><tr><th scope="col">From\
</th>${STACK.map((s) => html`<th scope="col" class="num">${statusLabel(s)}</th>`)}<th scope="col" class="num">Spend</th>\
</tr></thead><tbody>${perSlice}</tbody></table></details>
</section>
<section aria-labelledby="spend-heading"><h2 id="spend-heading">Spend</h2><figure class="chart-figure">${spendChart(stats, label)}</figure></section>
<section aria-labelledby="failures-heading"><h2 id="failures-heading">Latest failures</h2>${failures}<p><a \
href="${runsLink(page, period, 'failed')}">Every failed run of the ${label.toLowerCase()} →</a></p></section>`,
    });
  },
});
