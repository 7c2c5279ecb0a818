// The runs of a space (the runs the person may read, as GET /api/runs shows them): filters in
// the URL, cursor pages newest first, rows that follow their runs live (the space's realtime
// stream; console.js re-reads this page and swaps the rows), cancel per row, and a bulk cancel
// of everything live the filters match.
import { ProblemError } from '../../../shared/errors.ts';
import { visiblePackagesQuery } from '../../../shared/packages/visibility.ts';
import { isTerminal, RUN_SELECT, type RunRow } from '../../../shared/runs/model.ts';
import { cursorPage } from '../../pagination.ts';
import { visibleRuns } from '../../resources/runs.ts';
import { actionButton, csrfField, errorSummary, type FieldErrors, type Option, selectField, textField } from '../forms.ts';
import { type Html, html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, type PageContext } from '../page.ts';
import {
  applyRunFilters,
  cancellableStatuses,
  FILTER_PARAMS,
  filterQuery,
  localValue,
  PERIODS,
  parseRunFilters,
  type RunFilters,
} from '../views/run-filters.ts';
import { launcherLabel, launcherNames, runRow, statusLabel } from '../views/runs.ts';

const PAGE_SIZE = 50;
const CURSOR = /^run_[0-9A-Za-z]{1,64}$/;

type Listed = RunRow & { scope: string; name: string; ephemeral: boolean };

function cursorOf(raw: string | string[] | undefined): string | undefined {
  const v = Array.isArray(raw) ? raw[0] : raw;
  return v && CURSOR.test(v) ? v : undefined;
}

async function filterOptions(page: PageContext) {
  const { knex } = page.ctx.services;
  const { org, space, scopes } = page.space!;
  const agents: { scope: string; name: string }[] = await visiblePackagesQuery(knex, org.id, space.id)
    .where('packages.type', 'agent')
    .select('packages.scope', 'packages.name')
    .orderBy([{ column: 'packages.scope' }, { column: 'packages.name' }])
    .limit(500);
  const schedules: { id: string; name: string }[] | undefined = scopes.has('schedules:read')
    ? await knex('schedules').where({ org_id: org.id, space_id: space.id }).select('id', 'name').orderBy('name').limit(500)
    : undefined;
  return { agents: agents.map((a) => `${a.scope}/${a.name}`), schedules };
}

function filterForm(page: PageContext, f: RunFilters, errors: FieldErrors, options: Awaited<ReturnType<typeof filterOptions>>): Html {
  const any: Option = { value: '', label: 'Any' };
  const statuses: Option[] = [any, ...['pending', 'running', 'success', 'failed', 'timeout', 'cancelled'].map((s) => ({ value: s, label: statusLabel(s) }))];
  const agents: Option[] = [any, ...options.agents.map((a) => ({ value: a, label: a }))];
  if (f.agent && !options.agents.includes(f.agent)) agents.push({ value: f.agent, label: f.agent });
  const schedule = options.schedules
    ? selectField({
        id: 'filter-schedule',
        name: 'schedule',
        label: 'Schedule',
        value: f.schedule ?? '',
        options: [
          any,
          ...options.schedules.map((s) => ({ value: s.id, label: s.name })),
          ...(f.schedule && !options.schedules.some((s) => s.id === f.schedule) ? [{ value: f.schedule, label: f.schedule }] : []),
        ],
        error: errors['filter-schedule'],
      })
    : textField({ id: 'filter-schedule', name: 'schedule', label: 'Schedule id', value: f.schedule, placeholder: 'sch_…', error: errors['filter-schedule'] });
  const periods: Option[] = [{ value: '', label: 'Any time' }, ...Object.entries(PERIODS).map(([value, p]) => ({ value, label: p.label }))];
  return html`<form method="get" action="${page.space!.base}/runs" class="filters" aria-label="Filter runs">
${selectField({ id: 'filter-status', name: 'status', label: 'Status', value: f.status ?? '', options: statuses, error: errors['filter-status'] })}
${selectField({ id: 'filter-agent', name: 'agent', label: 'Agent', value: f.agent ?? '', options: agents, error: errors['filter-agent'] })}
${schedule}
${textField({ id: 'filter-endUser', name: 'endUser', label: 'End-user id', value: f.endUser, placeholder: 'eu_…', error: errors['filter-endUser'] })}
${selectField({ id: 'filter-period', name: 'period', label: 'Created', value: f.period ?? '', options: periods, error: errors['filter-period'] })}
${textField({
  id: 'filter-createdAfter',
  name: 'createdAfter',
  label: 'Created after (UTC)',
  type: 'datetime-local',
  value: f.createdAfter ? localValue(f.createdAfter) : '',
  error: errors['filter-createdAfter'],
})}
${textField({
  id: 'filter-createdBefore',
  name: 'createdBefore',
  label: 'Created before (UTC)',
  type: 'datetime-local',
  value: f.createdBefore ? localValue(f.createdBefore) : '',
  error: errors['filter-createdBefore'],
})}
<div class="filter-actions"><button type="submit">Apply filters</button> <a href="${page.space!.base}/runs" class="button secondary">Clear</a></div>
</form>`;
}

/**
 * Bulk actions on what the filters match: cancel the live runs (with runs:cancel), replay the
 * runs (with agents:run, once a filter narrows the list). Each leads to a confirmation.
 */
function bulkForms(page: PageContext, f: RunFilters, o: { live: number; total: number; filtered: boolean }): Html {
  const hidden = [...filterQuery(f)].map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  const form = (kind: string, label: string, className: string) =>
    html`<form method="post" action="${page.space!.base}/runs/bulk-${kind}" \
class="inline-form">${csrfField(page)}${hidden}<button type="submit" class="${className}" \
aria-describedby="bulk-help">${label}</button></form>`;
  const cancel = o.live ? form('cancel', `Cancel ${o.live} live run${o.live === 1 ? '' : 's'}`, 'danger') : '';
  const replay =
    o.filtered && o.total && page.space!.scopes.has('agents:run') ? form('replay', `Replay ${o.total} run${o.total === 1 ? '' : 's'}…`, 'secondary') : '';
  if (!cancel && !replay) return html``;
  return html`<div class="bulk">${cancel}${replay}<span class="help" id="bulk-help">For every run these filters match; \
you confirm first, then follow the progress.</span></div>`;
}

function pager(page: PageContext, f: RunFilters, rows: Listed[], o: { hasMore: boolean; after?: string; before?: string }): Html {
  const link = (param: string, id: string) => {
    const q = filterQuery(f);
    q.set(param, id);
    return `${page.space!.base}/runs?${q}`;
  };
  const backward = o.before !== undefined;
  const newer =
    rows.length && (o.after !== undefined || (backward && o.hasMore)) ? html`<a href="${link('endingBefore', rows[0].id)}" rel="prev">← Newer runs</a>` : '';
  const older = rows.length && (backward || o.hasMore) ? html`<a href="${link('startingAfter', rows[rows.length - 1].id)}" rel="next">Older runs →</a>` : '';
  return newer || older ? html`<nav class="pager" aria-label="Pages of runs">${newer}${older}</nav>` : html``;
}

export default definePage({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/runs',
  context: 'space',
  scope: 'runs:read',
  nav: { label: 'Runs', order: 20 },
  async handler(page) {
    const { ctx } = page;
    const { knex } = ctx.services;
    const now = Date.now();
    const { filters, errors } = parseRunFilters((n) => page.query[n]);
    const base = () => applyRunFilters(visibleRuns(ctx), filters, now);
    let after = cursorOf(page.query.startingAfter);
    let before = after ? undefined : cursorOf(page.query.endingBefore);
    const pageOf = () =>
      cursorPage<Listed>(ctx, base().select(RUN_SELECT), {
        limit: PAGE_SIZE,
        startingAfter: after,
        endingBefore: before,
        key: 'r.id',
        createdAt: 'r.created_at',
      });
    let listed: Awaited<ReturnType<typeof pageOf>>;
    try {
      listed = await pageOf();
    } catch (err) {
      if (!(err instanceof ProblemError && err.code === 'validation_failed')) throw err;
      errors[''] = 'That page of runs is gone (its first run was deleted, or no longer matches): here are the newest.';
      after = before = undefined;
      listed = await pageOf();
    }
    const canCancel = page.space!.scopes.has('runs:cancel');
    const cancellable = cancellableStatuses(filters);
    const [[{ total }], live, options, names] = await Promise.all([
      base().count<{ total: string }[]>('* as total'),
      canCancel && cancellable.length
        ? base()
            .whereIn('r.status', cancellable)
            .count<{ n: string }[]>('* as n')
            .then((r) => Number(r[0].n))
        : 0,
      filterOptions(page),
      launcherNames(knex, page.space!.org.id, listed.rows),
    ]);
    const rows = listed.rows.map((run) =>
      runRow(
        page.space!.base,
        run,
        launcherLabel(names, run),
        canCancel && !isTerminal(run.status)
          ? actionButton(page, {
              action: `${page.space!.base}/runs/${run.id}/cancel`,
              label: 'Cancel',
              fields: { return: ctx.originalUrl },
              className: 'small secondary',
            })
          : html``,
      ),
    );
    const count = Number(total);
    const filtered = FILTER_PARAMS.some((p) => page.query[p]);
    const stream = `/api/realtime/runs?orgId=${page.space!.org.id}&spaceId=${page.space!.space.id}&channels=run_update`;
    const table = rows.length
      ? html`<table class="data runs"><caption class="visually-hidden">Runs, newest first</caption><thead><tr><th \
scope="col">Status</th><th scope="col">Run</th><th scope="col">Agent</th><th scope="col">Launched by</th><th \
scope="col">Created</th><th scope="col" class="num">Duration</th><th scope="col" class="num">Tokens</th><th scope="col" \
class="num">Cost</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody \
id="runs-rows">${rows}</tbody></table>`
      : html`<p class="empty" id="runs-empty">${
          filtered ? 'No run matches these filters.' : 'No runs yet. Launch an agent (POST /api/agents/@scope/name/run) and it shows here at once.'
        }</p>`;
    sendConsolePage(page, {
      title: 'Runs',
      current: 'runs',
      body: html`${errorSummary(errors, 'Some filters could not be used')}
${filterForm(page, filters, errors, options)}
<div id="runs-region" data-controller="live-runs" data-stream="${stream}">
<div class="list-head"><p id="runs-count">${count.toLocaleString('en-US')} \
run${count === 1 ? '' : 's'}${filtered ? ' match these filters' : ' in this space'}</p>${bulkForms(page, filters, { live, total: count, filtered })}</div>
${table}
${pager(page, filters, listed.rows, { hasMore: listed.hasMore, after, before })}
</div>
<p class="visually-hidden" role="status" id="runs-live"></p>`,
    });
  },
});
