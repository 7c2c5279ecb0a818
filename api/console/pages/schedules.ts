// The schedules of a space (what GET /api/schedules lists, newest first, cursor pages): each
// with its agent, its cron and zone, its next firing as Temporal computes it, its state, and
// pause or resume for those who may; "New schedule" leads to the form.
import { ProblemError } from '../../../shared/errors.ts';
import type { ScheduleWithPackage } from '../../../shared/schedules/model.ts';
import { cursorPage } from '../../pagination.ts';
import { scheduleAuthority, scheduleDtos, spaceSchedules } from '../../resources/schedules.ts';
import { actionButton, errorSummary } from '../forms.ts';
import { html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage } from '../page.ts';
import { agentPath } from '../views/agents.ts';
import { scheduleState, zonedTime } from '../views/schedules.ts';

const PAGE_SIZE = 50;
const CURSOR = /^sch_[0-9A-Za-z]{1,64}$/;

export default definePage({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/schedules',
  context: 'space',
  scope: 'schedules:read',
  nav: { label: 'Schedules', order: 40 },
  async handler(page) {
    const { ctx } = page;
    const { base, scopes } = page.space!;
    const raw = typeof page.query.startingAfter === 'string' ? page.query.startingAfter : undefined;
    let after = raw && CURSOR.test(raw) ? raw : undefined;
    let gone = '';
    const pageOf = () =>
      cursorPage<ScheduleWithPackage>(ctx, spaceSchedules(ctx), { key: 's.id', createdAt: 's.created_at', limit: PAGE_SIZE, startingAfter: after });
    let listed: Awaited<ReturnType<typeof pageOf>>;
    try {
      listed = await pageOf();
    } catch (err) {
      if (!(err instanceof ProblemError && err.code === 'validation_failed')) throw err;
      gone = 'That page of schedules is gone (its first schedule was deleted): here are the newest.';
      after = undefined;
      listed = await pageOf();
    }
    // Pause and resume are for a schedule's creator and the space's admins (the API's rule,
    // asked once: an admin may act on every schedule).
    const [dtos, admin] = await Promise.all([
      scheduleDtos(ctx, listed.rows),
      scheduleAuthority(ctx, { created_by: '' }).then(
        () => true,
        () => false,
      ),
    ]);
    const canWrite = scopes.has('schedules:write');
    const rows = dtos.map((s) => {
      const toggle =
        canWrite && (admin || s.created_by === page.user!.id) && (s.enabled || scopes.has('agents:run'))
          ? actionButton(page, {
              action: `${base}/schedules/${s.id}/${s.enabled ? 'pause' : 'resume'}`,
              label: s.enabled ? 'Pause' : 'Resume',
              fields: { return: ctx.originalUrl },
              className: 'small secondary',
            })
          : '';
      return html`<tr id="schedule-${s.id}" data-schedule-id="${s.id}"><td><a href="${base}/schedules/${s.id}">\
<strong>${s.name}</strong></a></td><td><a href="${agentPath(base, s.packageId)}">${s.packageId}</a></td><td>\
<code>${s.cron_expression}</code> <span class="muted">${s.timezone}</span></td>\
<td>${s.next_run_at ? zonedTime(new Date(s.next_run_at), s.timezone) : html`<span class="muted">—</span>`}</td>\
<td>${scheduleState(s)}</td><td class="actions">${toggle}</td></tr>`;
    });
    const create = canWrite && scopes.has('agents:run') ? html`<a class="button" href="${base}/schedules/new">New schedule</a>` : '';
    const table = rows.length
      ? html`<table class="data schedules"><caption class="visually-hidden">Schedules, newest first</caption><thead><tr>\
<th scope="col">Name</th><th scope="col">Agent</th><th scope="col">When</th><th scope="col">Next run</th><th \
scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>\
<tbody>${rows}</tbody></table>`
      : html`<p class="empty">${after ? 'No older schedule.' : 'No schedule in this space yet.'}</p>`;
    const last = listed.rows.at(-1);
    const pager =
      after || listed.hasMore
        ? html`<nav class="pager" aria-label="Pages of schedules">${
            after
              ? html`<a rel="prev" \
href="${base}/schedules">← Newest</a>`
              : ''
          }${
            listed.hasMore && last
              ? html`<a rel="next" \
href="${base}/schedules?startingAfter=${last.id}">Older schedules →</a>`
              : ''
          }</nav>`
        : '';
    sendConsolePage(page, {
      title: 'Schedules',
      current: 'schedules',
      body: html`${errorSummary(gone ? { '': gone } : undefined, 'The list starts again')}<div class="list-head">\
<p>Agents run on a cron schedule, as the person who created the schedule.</p>${create}</div>${table}${pager}`,
    });
  },
});
