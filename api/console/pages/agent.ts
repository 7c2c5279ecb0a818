// One agent (what GET /api/agents/{scope}/{name} shows the person, 404 otherwise): its versions,
// the launch form generated from the chosen version's input schema (`property_order`, `ui_hints`,
// file inputs through the uploads flow), whether the person's connections are ready for its
// integrations (with connect buttons), its recent runs and its schedules. `?version=` picks the
// version whose form is shown, as the launch's `version` does.
import semver from 'semver';
import { agentReadiness, type IntegrationReadiness } from '../../../shared/integrations/readiness.ts';
import { agentRepresentation } from '../../../shared/packages/representation.ts';
import { type ResolvedAgent, resolveAgent } from '../../../shared/packages/resolve-agent.ts';
import { isVersionSelector } from '../../../shared/packages/versions.ts';
import { RUN_SELECT, type RunRow } from '../../../shared/runs/model.ts';
import { connectionOwner } from '../../resources/connections.ts';
import { readablePackage, viewOf } from '../../resources/packages.ts';
import { visibleRuns } from '../../resources/runs.ts';
import { spaceSchedules } from '../../resources/schedules.ts';
import { formatDuration, formatTime } from '../format.ts';
import { csrfField, errorSummary, type FieldErrors, selectField } from '../forms.ts';
import { type Html, html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, type PageContext } from '../page.ts';
import { agentPath, readinessTable } from '../views/agents.ts';
import { inputFields, inputSpecOf, type RawValues, rawValuesOf } from '../views/input-form.ts';
import { launcherLabel, launcherNames, runRow } from '../views/runs.ts';

/** A type, not an interface: page helpers take params as a string record. */
export type AgentParams = { scope: string; name: string };

/** A refused launch, shown again as typed with its reasons. */
export interface LaunchState {
  version?: string;
  values?: RawValues;
  errors?: FieldErrors;
  status?: number;
}

type Page = PageContext<AgentParams>;

function versionOf(page: Page, state: LaunchState): { selector?: string; error?: string } {
  const raw = state.version ?? (typeof page.query.version === 'string' ? page.query.version.trim() : '');
  if (!raw) return {};
  return isVersionSelector(raw) ? { selector: raw } : { error: 'Write an exact version (1.2.0), latest, or a range (^1.0.0).' };
}

function launchForm(page: Page, agent: ResolvedAgent, versions: string[], readiness: IntegrationReadiness[], state: LaunchState): Html {
  const action = `${agentPath(page.space!.base, agent.fullName)}/run`;
  const spec = inputSpecOf(agent.manifest, true);
  const values = state.values ?? rawValuesOf(spec, undefined);
  const unready = readiness.filter((r) => r.status !== 'ready');
  const warning = unready.length
    ? html`<p class="alert" role="note">A launch is refused \
until ${unready.map((r) => r.packageId).join(', ')} ${unready.length === 1 ? 'has' : 'have'} a usable connection: see \
<a href="#connections">Connections</a>.</p>`
    : '';
  const chooser =
    versions.length > 1
      ? html`<form method="get" action="${agentPath(page.space!.base, agent.fullName)}#launch" class="inline-fields" \
aria-label="Version of the \
form">${selectField({
          id: 'launch-version',
          name: 'version',
          label: 'Version',
          value: agent.version,
          options: versions.map((v) => ({
            value: v,
            label:
              v === versions[0]
                ? `${v} \
(latest)`
                : v,
          })),
        })}<button type="submit" class="secondary">Show this version's form</button></form>`
      : '';
  return html`${chooser}${errorSummary(state.errors, 'The run was not launched')}${warning}
<form method="post" action="${action}" class="stack launch-form" \
aria-labelledby="launch-heading">${csrfField(page)}<input type="hidden" name="version" value="${agent.version}">
${inputFields(spec, values, state.errors)}
<div><button type="submit">Launch ${agent.fullName}@${agent.version}</button> <span class="help">The run is yours: it \
is checked against the input schema, then you follow it on its page.</span></div>
</form>`;
}

async function recentRuns(page: Page, packageId: string, agentId: string): Promise<Html> {
  if (!page.space!.scopes.has('runs:read')) return html`<p class="note">Seeing runs needs the runs:read permission.</p>`;
  const base = page.space!.base;
  const rows = (await visibleRuns(page.ctx)
    .where('r.package_id', packageId)
    .select(RUN_SELECT)
    .orderBy([
      { column: 'r.created_at', order: 'desc' },
      { column: 'r.id', order: 'desc' },
    ])
    .limit(10)) as (RunRow & { scope: string; name: string })[];
  if (!rows.length) return html`<p class="empty">No run of this agent that you can see yet.</p>`;
  const names = await launcherNames(page.ctx.services.knex, page.space!.org.id, rows);
  return html`<table class="data runs"><caption class="visually-hidden">Recent runs of ${agentId}</caption><thead><tr>\
<th scope="col">Status</th><th scope="col">Run</th><th scope="col">Agent</th><th scope="col">Launched by</th><th \
scope="col">Created</th><th scope="col" class="num">Duration</th><th scope="col" class="num">Tokens</th><th scope="col" \
class="num">Cost</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>\
<tbody>${rows.map((r) => runRow(base, r, launcherLabel(names, r), html``))}</tbody></table>
<p><a href="${base}/runs?${String(new URLSearchParams({ agent: agentId }))}">Every run of ${agentId} →</a></p>`;
}

async function schedulesOf(page: Page, packageId: string, agentId: string, launchable: boolean): Promise<Html> {
  const { scopes, base } = page.space!;
  if (!scopes.has('schedules:read')) return html`<p class="note">Seeing schedules needs the schedules:read permission.</p>`;
  const rows: { id: string; name: string; cron_expression: string; timezone: string; enabled: boolean }[] = await spaceSchedules(page.ctx)
    .where('s.package_id', packageId)
    .orderBy('s.created_at', 'desc')
    .limit(50);
  const create =
    launchable && scopes.has('schedules:write') && scopes.has('agents:run')
      ? html`<p><a class="button secondary" \
href="${base}/schedules/new?${String(new URLSearchParams({ agent: agentId }))}">Schedule runs of ${agentId}…</a></p>`
      : '';
  const list = rows.length
    ? html`<ul class="plain-list">${rows.map(
        (s) => html`<li><a href="${base}/schedules/${s.id}">${s.name}</a> \
<code>${s.cron_expression}</code> <span class="muted">${s.timezone}${s.enabled ? '' : ', paused'}</span></li>`,
      )}</ul>`
    : html`<p class="note">No schedule runs this agent.</p>`;
  return html`${list}${create}`;
}

/** The agent page; a refused launch renders it again with the form as typed. */
export async function renderAgentPage(page: Page, state: LaunchState = {}): Promise<void> {
  const { ctx } = page;
  const { knex } = ctx.services;
  const { org, space, scopes, base } = page.space!;
  const pkg = await readablePackage(ctx, page.params, 'agent');
  const chosen = versionOf(page, state);
  const [rep, versionRows, agent] = await Promise.all([
    agentRepresentation(viewOf(ctx), pkg),
    knex('package_versions').where({ package_id: pkg.id }).select('version', 'created_at') as Promise<{ version: string; created_at: Date }[]>,
    chosen.error ? undefined : resolveAgent(knex, org.id, space.id, pkg.scope, pkg.name, chosen.selector),
  ]);
  const versions = versionRows.sort((a, b) =>
    semver.valid(a.version) && semver.valid(b.version) ? semver.rcompare(a.version, b.version) : b.created_at.getTime() - a.created_at.getTime(),
  );
  const agentId = rep.id;
  const readiness = agent ? await agentReadiness(knex, { orgId: org.id, spaceId: space.id, owner: connectionOwner(ctx) }, agent.manifest) : [];
  const [runs, schedules] = await Promise.all([recentRuns(page, pkg.id, agentId), schedulesOf(page, pkg.id, agentId, versions.length > 0)]);
  const launch = !versions.length
    ? html`<p class="empty">No published version yet: publish one (POST /api/packages/import) to launch it.</p>`
    : !scopes.has('agents:run')
      ? html`<p class="note">Launching needs the agents:run permission in this space.</p>`
      : agent
        ? launchForm(
            page,
            agent,
            versions.map((v) => v.version),
            readiness,
            state,
          )
        : html`<p class="alert" role="alert">${chosen.error ?? `No version ${chosen.selector} of ${agentId}.`} <a \
href="${agentPath(base, agentId)}#launch">Use the latest version</a>.</p>`;
  const versionTable = versions.length
    ? html`<table class="data versions"><caption class="visually-hidden">Published versions</caption><thead><tr><th \
scope="col">Version</th><th scope="col">Published</th><th scope="col"><span class="visually-hidden">Actions</span></th>\
</tr></thead><tbody>${versions.map(
        (v, i) =>
          html`<tr${v.version === agent?.version ? ' aria-current="true" class="current"' : ''}><td>\
<code>${v.version}</code>${i === 0 ? html` <span class="badge status-success">latest</span>` : ''}</td><td><time \
datetime="${v.created_at.toISOString()}">${formatTime(v.created_at)}</time></td><td \
class="actions">${
            scopes.has('agents:run')
              ? html`<a \
href="${agentPath(base, agentId)}?${String(new URLSearchParams({ version: v.version }))}#launch">Launch this version…\
</a>`
              : ''
          }</td></tr>`,
      )}</tbody></table>`
    : html`<p class="note">No published version.</p>`;
  const title = String(rep.display_name ?? agentId);
  sendConsolePage(page, {
    title,
    status: state.status,
    current: 'agents',
    crumbs: [{ label: 'Agents', href: `${base}/agents` }, { label: agentId }],
    heading: html`<h1>${title} <code class="muted">${agentId}</code></h1>`,
    body: html`${rep.description ? html`<p class="lead">${rep.description}</p>` : ''}
<dl class="facts card">
<div><dt>Latest version</dt><dd>${rep.version ?? '—'}</dd></div>
<div><dt>Versions</dt><dd>${versions.length}</dd></div>
<div><dt>Timeout</dt><dd>${formatDuration(rep.effective_timeout_seconds * 1000)}</dd></div>
<div><dt>Running now</dt><dd>${rep.running_runs}</dd></div>
<div><dt>Integrations</dt><dd>${readiness.length ? `${readiness.filter((r) => r.status === 'ready').length} of ${readiness.length} ready` : 'none'}</dd></div>
</dl>
<section id="launch" aria-labelledby="launch-heading"><h2 id="launch-heading">Launch a run${
      agent
        ? html` of \
version ${agent.version}`
        : ''
    }</h2>${launch}</section>
<section id="connections" aria-labelledby="connections-heading"><h2 id="connections-heading">Connections</h2><p \
class="help">Whether your connections are ready for what the agent uses${agent ? ` (version ${agent.version})` : ''}: a \
run uses the most recently updated usable one.</p>${readinessTable(page, readiness)}</section>
<section id="versions" aria-labelledby="versions-heading"><h2 id="versions-heading">Versions</h2>${versionTable}</section>
<section id="runs" aria-labelledby="runs-heading"><h2 id="runs-heading">Recent runs</h2>${runs}</section>
<section id="schedules" aria-labelledby="schedules-heading"><h2 id="schedules-heading">Schedules</h2>${schedules}</section>`,
  });
}

export default definePage<AgentParams>({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/agents/:scope/:name',
  context: 'space',
  scope: 'agents:read',
  handler: (page) => renderAgentPage(page),
});
