// One schedule (what GET /api/schedules/{id} shows the person, 404 otherwise): what it runs and
// when, its state, its next five firings and its past ticks marked ran, refused or missed
// (shared/schedules/ticks.ts), pause, resume and delete for its creator and the space's admins,
// and the edit form for its creator (only they decide what runs in their name).
import { resolveAgent } from '../../../shared/packages/resolve-agent.ts';
import type { ScheduleWithPackage } from '../../../shared/schedules/model.ts';
import { nextFirings, pastTicks } from '../../../shared/schedules/ticks.ts';
import { canReadRun } from '../../../shared/runs/visibility.ts';
import { runAudience } from '../../resources/runs.ts';
import { findSchedule, type ScheduleAuthority, scheduleAuthority } from '../../resources/schedules.ts';
import { formatTime } from '../format.ts';
import { actionButton, csrfField, errorSummary, type FieldErrors } from '../forms.ts';
import { type Html, html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, type PageContext } from '../page.ts';
import { agentPath } from '../views/agents.ts';
import { type InputSpec, inputSpecOf, rawValuesOf } from '../views/input-form.ts';
import { firingsList, type ScheduleFormValues, scheduleFields, scheduleState, tickStrip, tickTable } from '../views/schedules.ts';

export type ScheduleParams = { scheduleId: string };
type Page = PageContext<ScheduleParams>;

/** A refused edit, shown again as typed. */
export interface EditState {
  values?: ScheduleFormValues;
  errors?: FieldErrors;
  status?: number;
}

/** The schedule the URL names, in the page's space (404 otherwise). */
export function readSchedule(page: Page): Promise<ScheduleWithPackage> {
  return findSchedule(page.ctx, page.params.scheduleId);
}

/** What the person may do to it: `undefined` for nothing (neither its creator nor an admin of the space). */
export async function authorityOver(page: Page, s: ScheduleWithPackage): Promise<ScheduleAuthority | undefined> {
  return scheduleAuthority(page.ctx, s).catch(() => undefined);
}

/** The input spec of the schedule's agent (its latest version: what the next tick checks). */
export async function scheduleSpec(page: Page, s: ScheduleWithPackage): Promise<InputSpec> {
  const agent = await resolveAgent(page.ctx.services.knex, s.org_id, s.space_id, s.scope, s.pkg_name);
  return inputSpecOf(agent?.manifest ?? { input: { schema: null } }, false);
}

function actions(page: Page, s: ScheduleWithPackage, authority: ScheduleAuthority | undefined): Html {
  const { scopes, base } = page.space!;
  if (!authority) return html``;
  const at = `${base}/schedules/${s.id}`;
  const toggle = !scopes.has('schedules:write')
    ? ''
    : s.enabled
      ? actionButton(page, { action: `${at}/pause`, label: 'Pause', className: 'secondary' })
      : scopes.has('agents:run')
        ? actionButton(page, { action: `${at}/resume`, label: 'Resume' })
        : '';
  const remove = scopes.has('schedules:delete')
    ? actionButton(page, { action: `${at}/delete`, label: 'Delete schedule', className: 'danger', describedBy: 'delete-help' })
    : '';
  return html`<div class="run-actions">${toggle}${remove}${
    remove
      ? html`<span class="visually-hidden" \
id="delete-help">Its runs stay, still naming it.</span>`
      : ''
  }</div>`;
}

function editSection(page: Page, s: ScheduleWithPackage, authority: ScheduleAuthority | undefined, spec: InputSpec, state: EditState): Html {
  const { scopes, base } = page.space!;
  if (authority !== 'creator') {
    return html`<p class="note">Only the person who created this schedule can change what it runs or when: its runs \
execute as them.${authority === 'admin' ? ' As an admin of the space you can pause, resume or delete it.' : ''}</p>`;
  }
  if (!scopes.has('schedules:write') || !scopes.has('agents:run'))
    return html`<p class="note">Changing it needs the schedules:write and agents:run permissions.</p>`;
  const values = state.values ?? { name: s.name, cron: s.cron_expression, timezone: s.timezone, input: rawValuesOf(spec, s.input, false) };
  return html`${errorSummary(state.errors, 'The schedule was not changed')}
<form method="post" action="${base}/schedules/${s.id}" class="stack schedule-form" aria-labelledby="edit-heading">${csrfField(page)}
${scheduleFields(values, spec, state.errors ?? {})}
<div><button type="submit">Save changes</button></div>
</form>`;
}

/** The schedule page; a refused edit renders it again with the form as typed. */
export async function renderSchedulePage(page: Page, state: EditState = {}): Promise<void> {
  const { ctx } = page;
  const { knex, workflows } = ctx.services;
  const { base } = page.space!;
  const s = await readSchedule(page);
  const [authority, spec, firings, ticks, creator] = await Promise.all([
    authorityOver(page, s),
    scheduleSpec(page, s),
    nextFirings(workflows, s),
    pastTicks(knex, workflows, s),
    knex('users').where({ id: s.created_by }).first('name', 'email') as Promise<{ name: string; email: string } | undefined>,
  ]);
  const audience = runAudience(ctx);
  const agentId = `${s.scope}/${s.pkg_name}`;
  sendConsolePage(page, {
    title: s.name,
    status: state.status,
    current: 'schedules',
    crumbs: [{ label: 'Schedules', href: `${base}/schedules` }, { label: s.name }],
    body: html`<section class="run-summary" aria-label="Summary">${actions(page, s, authority)}
<dl class="facts">
<div><dt>State</dt><dd>${scheduleState(s)}</dd></div>
<div><dt>Agent</dt><dd><a href="${agentPath(base, agentId)}">${agentId}</a> <span class="muted">latest version</span></dd></div>
<div><dt>When</dt><dd><code>${s.cron_expression}</code> <span class="muted">${s.timezone}</span></dd></div>
<div><dt>Runs as</dt><dd>${creator ? creator.name || creator.email : s.created_by}</dd></div>
<div><dt>Created</dt><dd>${formatTime(s.created_at)}</dd></div>
<div><dt>Id</dt><dd><code>${s.id}</code></dd></div>
</dl></section>
<section aria-labelledby="firings-heading"><h2 id="firings-heading">Next five firings</h2>${firingsList(firings, s.timezone)}</section>
<section aria-labelledby="ticks-heading"><h2 id="ticks-heading">Past ticks</h2>
<p class="help">Ran: the tick's run was admitted. Refused: the tick could not start its run (limits, an input the agent \
no longer takes, a missing connection). Missed: the cron matched and no tick started (the schedule was paused, or the \
service was down past the five-minute catch-up window).</p>
<figure class="ticks-figure">${tickStrip(ticks, firings)}<figcaption><ul class="legend" aria-label="Legend"><li><span \
class="swatch tick-ran" aria-hidden="true"></span>Ran</li><li><span class="swatch tick-refused" aria-hidden="true">\
</span>Refused</li><li><span class="swatch tick-missed" aria-hidden="true"></span>Missed</li><li><span class="swatch \
tick-next" aria-hidden="true"></span>Next firing</li></ul></figcaption></figure>
${tickTable(base, ticks, s.timezone, (run) => canReadRun(audience, run))}
<p><a href="${base}/runs?${String(new URLSearchParams({ schedule: s.id }))}">Every run of this schedule →</a></p></section>
<section aria-labelledby="edit-heading"><h2 id="edit-heading">Edit</h2>${editSection(page, s, authority, spec, state)}</section>`,
  });
}

export default definePage<ScheduleParams>({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/schedules/:scheduleId',
  context: 'space',
  scope: 'schedules:read',
  handler: (page) => renderSchedulePage(page),
});
