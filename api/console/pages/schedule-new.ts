// A new schedule (POST /api/agents/{scope}/{name}/schedules, on its rate-limit counter): choose
// the agent, then name, cron, time zone and the input of each run, generated from the agent's
// latest input schema. A cron or zone the service refuses comes back beside its field.
import { ProblemError } from '../../../shared/errors.ts';
import { type ResolvedAgent, resolveAgent } from '../../../shared/packages/resolve-agent.ts';
import { visiblePackagesQuery } from '../../../shared/packages/visibility.ts';
import { createSchedule } from '../../resources/schedules.ts';
import { setFlash } from '../flash.ts';
import { csrfField, errorSummary, type FieldErrors, selectField } from '../forms.ts';
import { html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, type PageContext, redirect } from '../page.ts';
import { inputSpecOf, rawValuesFrom, rawValuesOf, readInputForm } from '../views/input-form.ts';
import { type ScheduleFormValues, scheduleErrorsOf, scheduleFields, scheduleFormErrors } from '../views/schedules.ts';

const AGENT = /^(@[a-z0-9][a-z0-9-]*)\/([a-z0-9][a-z0-9-]*)$/;

/** Agents of the space with a published version: what a schedule can run. */
async function schedulable(page: PageContext): Promise<string[]> {
  const { org, space } = page.space!;
  const { knex } = page.ctx.services;
  const rows: { scope: string; name: string }[] = await visiblePackagesQuery(knex, org.id, space.id)
    .where('packages.type', 'agent')
    .whereExists(knex('package_versions').whereRaw('package_versions.package_id = packages.id'))
    .select('packages.scope', 'packages.name')
    .orderBy([{ column: 'packages.scope' }, { column: 'packages.name' }])
    .limit(500);
  return rows.map((r) => `${r.scope}/${r.name}`);
}

async function agentOf(page: PageContext, id: string | undefined): Promise<ResolvedAgent | undefined> {
  const m = id ? AGENT.exec(id) : null;
  if (!m) return undefined;
  const { org, space } = page.space!;
  return resolveAgent(page.ctx.services.knex, org.id, space.id, m[1], m[2]);
}

async function render(
  page: PageContext,
  o: { agent?: ResolvedAgent; values?: ScheduleFormValues; errors?: FieldErrors; status?: number; chooseError?: string },
) {
  const base = page.space!.base;
  const crumbs = [{ label: 'Schedules', href: `${base}/schedules` }, { label: 'New schedule' }];
  if (!o.agent) {
    const agents = await schedulable(page);
    const body = agents.length
      ? html`<form method="get" action="${base}/schedules/new" class="stack narrow" aria-label="Choose the \
agent">${selectField({
          id: 'schedule-agent',
          name: 'agent',
          label: 'Agent',
          options: agents.map((a) => ({ value: a, label: a })),
          error: o.chooseError,
          help: 'Its latest published version runs at each tick.',
        })}<div>\
<button type="submit">Continue</button></div></form>`
      : html`<p class="empty">No agent with a published version in this space: publish one first.</p>`;
    return sendConsolePage(page, { title: 'New schedule', status: o.status, current: 'schedules', crumbs, body });
  }
  const spec = inputSpecOf(o.agent.manifest, false);
  const values = o.values ?? { name: '', cron: '', timezone: 'UTC', input: rawValuesOf(spec, undefined) };
  sendConsolePage(page, {
    title: 'New schedule',
    status: o.status,
    current: 'schedules',
    crumbs,
    body: html`<p class="lead">Runs of <strong>${o.agent.fullName}</strong> (its latest version at each tick), as you, \
in this space. <a href="${base}/schedules/new">Another agent</a></p>
${errorSummary(o.errors, 'The schedule was not created')}
<form method="post" action="${base}/schedules/new" class="stack schedule-form" aria-label="New \
schedule">${csrfField(page)}<input type="hidden" name="agent" value="${o.agent.fullName}">
${scheduleFields(values, spec, o.errors ?? {})}
<div><button type="submit">Create schedule</button> <a class="button secondary" href="${base}/schedules">Cancel</a></div>
</form>`,
  });
}

export const newSchedulePage = definePage({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/schedules/new',
  context: 'space',
  scope: 'schedules:write',
  async handler(page) {
    const id = typeof page.query.agent === 'string' ? page.query.agent : undefined;
    const agent = await agentOf(page, id);
    await render(page, {
      agent,
      chooseError: id && !agent ? `No agent ${id} with a published version in this space.` : undefined,
      status: id && !agent ? 404 : undefined,
    });
  },
});

export const createSchedulePage = definePage({
  method: 'post',
  path: '/orgs/:orgId/spaces/:spaceId/schedules/new',
  context: 'space',
  scope: 'schedules:write',
  rateLimit: { key: 'POST /api/agents/:scope/:name/schedules', rule: { points: 10, duration: 60, by: 'identity' } },
  async handler(page) {
    const agent = await agentOf(page, page.form.get('agent') ?? undefined);
    if (!agent) return render(page, { chooseError: 'Choose an agent with a published version.', status: 400 });
    const spec = inputSpecOf(agent.manifest, false);
    const values: ScheduleFormValues = {
      name: page.form.get('name') ?? '',
      cron: page.form.get('cron_expression') ?? '',
      timezone: page.form.get('timezone') ?? '',
      input: rawValuesFrom(spec, page.form),
    };
    const read = readInputForm(spec, values.input);
    const errors = { ...scheduleFormErrors(values), ...read.errors };
    if (Object.keys(errors).length) return render(page, { agent, values, errors, status: 400 });
    const [scope, name] = agent.fullName.split('/');
    try {
      const created = await createSchedule(page.ctx, scope, name, {
        name: values.name,
        cron_expression: values.cron,
        timezone: values.timezone.trim(),
        input: read.input,
      });
      setFlash(page.ctx, {
        kind: 'ok',
        text: `Schedule “${created.name}” created${
          created.next_run_at
            ? `: it first fires \
at ${created.next_run_at.slice(0, 16).replace('T', ' ')} UTC`
            : ''
        }.`,
      });
      redirect(page, `${page.space!.base}/schedules/${created.id}`);
    } catch (err) {
      if (!(err instanceof ProblemError) || err.code === 'not_found') throw err;
      return render(page, { agent, values, errors: err.code === 'validation_failed' ? scheduleErrorsOf(spec, err) : { '': err.detail }, status: err.status });
    }
  },
});
