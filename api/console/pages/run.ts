// One run (what GET /api/runs/{id} shows the person, 404 otherwise): status, id, agent@version,
// who launched it, a ticking duration, tokens and cost, and tabs with deep links (#output,
// #input, #timeline, #logs, #deliveries). The page follows the run on its realtime stream:
// console.js re-reads this page's live regions on `run_update` and `run_metric` frames and
// appends `run_log` frames to the log.
import { logDto, type LogRow } from '../../../shared/runs/logs.ts';
import { isTerminal } from '../../../shared/runs/model.ts';
import { runTimeline } from '../../../shared/runs/timeline.ts';
import { agentForRun } from '../../../shared/packages/resolve-agent.ts';
import { orgScopes } from '../../../shared/identity/tenancy.ts';
import { userSchemaValidator, toFieldErrors } from '../../../shared/validation.ts';
import { runDeliveries } from '../../../shared/webhooks/run-deliveries.ts';
import { findVisibleRun } from '../../resources/runs.ts';
import { formatDuration, formatTime } from '../format.ts';
import { actionButton, csrfField, errorSummary, type FieldErrors, textareaField } from '../forms.ts';
import { type Html, html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, type PageContext } from '../page.ts';
import { timelineView } from '../views/timeline.ts';
import { deliveryResult } from '../views/webhooks.ts';
import { agentLabel, launcherLabel, launcherNames, runCost, runDuration, runTokens, statusBadge } from '../views/runs.ts';

/** Log lines shown at first; older ones through the API (GET /api/runs/{id}/logs). */
const LOG_LINES = 1000;

/** The run as findVisibleRun reads it; RUN_SELECT also reads whether its package is an inline one. */
export type Run = Awaited<ReturnType<typeof findVisibleRun>> & { ephemeral: boolean };

/** The run the URL names, when the person may read it (the API's rule; 404 otherwise). */
export async function readRun(page: PageContext<{ runId: string }>): Promise<Run> {
  return (await findVisibleRun(page.ctx, page.params.runId)) as Run;
}

function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'null';
}

/** The Temporal UI's list of workflows with the run's id (its workflow id), when the UI's address is known. */
function temporalLink(page: PageContext, runId: string): Html {
  const { temporalUiUrl, temporalNamespace } = page.ctx.services.config;
  if (!temporalUiUrl) return html`<span class="muted">Set TEMPORAL_UI_URL to link the workflow</span>`;
  const query = encodeURIComponent(`WorkflowId="${runId}"`);
  const href = `${temporalUiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(temporalNamespace)}/workflows?query=${query}`;
  return html`<a href="${href}" rel="noopener noreferrer" target="_blank">Open in the Temporal UI<span class="visually-hidden"> (new tab)</span></a>`;
}

async function summary(page: PageContext, run: Run): Promise<Html> {
  const names = await launcherNames(page.ctx.services.knex, run.org_id, [run]);
  const scopes = page.space!.scopes;
  const base = page.space!.base;
  const cancel =
    !isTerminal(run.status) && scopes.has('runs:cancel')
      ? actionButton(page, { action: `${base}/runs/${run.id}/cancel`, label: 'Cancel run', className: 'danger' })
      : '';
  const replay = scopes.has('agents:run') && !run.ephemeral ? html`<a class="button secondary" href="#input" data-tab-link="input">Replay…</a>` : '';
  const launched = html`${launcherLabel(names, run)}${
    run.schedule_id && run.actor_type !== 'schedule'
      ? html` <span \
class="muted">(schedule ${run.schedule_id})</span>`
      : ''
  }`;
  return html`<div class="run-actions">${cancel}${replay}</div>
<dl class="facts">
<div><dt>Status</dt><dd>${statusBadge(run.status)}</dd></div>
<div><dt>Agent</dt><dd>${agentLabel(run)}<span class="muted">@${run.package_version}</span></dd></div>
<div><dt>Launched by</dt><dd>${launched}</dd></div>
<div><dt>Created</dt><dd><time datetime="${run.created_at.toISOString()}">${formatTime(run.created_at)}</time></dd></div>
<div><dt>Duration</dt><dd data-field="duration">${runDuration(run)}</dd></div>
<div><dt>Tokens</dt><dd data-field="tokens">${runTokens(run)}${
    run.usage.inputTokens || run.usage.outputTokens
      ? html` \
<span class="muted">(${run.usage.inputTokens.toLocaleString('en-US')} \
in, ${run.usage.outputTokens.toLocaleString('en-US')} out)</span>`
      : ''
  }</dd></div>
<div><dt>Cost</dt><dd data-field="cost">${runCost(run)}</dd></div>
<div><dt>Timeout</dt><dd>${formatDuration(run.timeout_seconds * 1000)}</dd></div>
<div><dt>Workflow</dt><dd>${temporalLink(page, run.id)}</dd></div>
${run.end_user_id ? html`<div><dt>End-user</dt><dd><code>${run.end_user_id}</code></dd></div>` : ''}
${run.sandbox_mode ? html`<div><dt>Isolation</dt><dd>${run.sandbox_mode}</dd></div>` : ''}
</dl>
${
  run.error
    ? html`<div class="alert run-error" role="alert">\
<strong>${run.status === 'timeout' ? 'Timed out' : run.status === 'cancelled' ? 'Cancelled' : 'Failed'}:\
</strong> ${run.error}</div>`
    : ''
}`;
}

async function outputPanel(page: PageContext, run: Run): Promise<Html> {
  if (!run.result) {
    if (!isTerminal(run.status)) return html`<p class="empty">No output yet: the run is ${run.status}. It shows here as soon as the agent produces it.</p>`;
    return html`<p class="empty">The run ended ${run.status} without an output.</p>`;
  }
  const agent = await agentForRun(page.ctx.services.knex, run);
  let check: Html;
  if (!agent?.outputSchema) check = html`<p class="note">The agent declares no output schema: the output is shown as it came.</p>`;
  else {
    let errors: ReturnType<typeof toFieldErrors> = [];
    try {
      const validate = userSchemaValidator(agent.outputSchema);
      if (!validate(run.result.output)) errors = toFieldErrors(validate.errors ?? []);
    } catch (err) {
      errors = [{ field: 'schema', code: 'invalid_schema', message: (err as Error).message }];
    }
    check = errors.length
      ? html`<div class="alert" role="note"><strong>Does not match the output schema</strong>\
<ul>${errors.map((e) => html`<li><code>${e.field || '(root)'}</code>: ${e.message}</li>`)}</ul></div>`
      : html`<p class="ok-note"><span aria-hidden="true">✓</span> Matches the output schema of ${agentLabel(run)}@${run.package_version}.</p>`;
  }
  return html`${check}<pre class="json" tabindex="0" aria-label="Output"><code>${pretty(run.result.output)}</code></pre>`;
}

function inputPanel(page: PageContext, run: Run, replay: { input?: string; errors?: FieldErrors }): Html {
  const canReplay = page.space!.scopes.has('agents:run');
  const form = run.ephemeral
    ? html`<p class="note">This run's agent was an inline agent: it cannot be replayed from here.</p>`
    : canReplay
      ? html`<h3 id="replay-heading">Replay</h3>
<p class="help">Launch a new run of ${agentLabel(run)}@${run.package_version} with this input, edited if you like. It \
is checked against the agent's input schema and runs as you.</p>
${errorSummary(replay.errors, 'The run could not be replayed')}
<form method="post" action="${page.space!.base}/runs/${run.id}/replay" class="stack" aria-labelledby="replay-heading">${csrfField(page)}
${textareaField({
  id: 'replay-input',
  name: 'input',
  label: 'Input (JSON)',
  value: replay.input ?? pretty(run.input),
  rows: 12,
  spellcheck: false,
  className: 'code',
  help: 'A JSON object.',
  error: replay.errors?.['replay-input'],
})}
<button type="submit">Replay with this input</button></form>`
      : html`<p class="note">Replaying needs the agents:run permission in this space.</p>`;
  return html`<pre class="json" tabindex="0" aria-label="Input"><code>${pretty(run.input)}</code></pre>${form}`;
}

export function logLine(entry: ReturnType<typeof logDto> | null): Html {
  const e = entry ?? { seq: 0, level: 'info', kind: '', message: '', createdAt: '' };
  return html`<li class="log-line level-${e.level}" data-seq="${e.seq}" data-level="${e.level}"><span class="seq" \
data-field="seq">${e.seq ? `#${e.seq}` : ''}</span><time data-field="time" \
datetime="${e.createdAt}">${e.createdAt ? e.createdAt.slice(11, 23) : ''}</time><span class="lvl" \
data-field="level">${e.level}</span><span class="kind" data-field="kind">${e.kind}</span><span class="msg" \
data-field="message">${e.message}</span></li>`;
}

async function logsPanel(page: PageContext, run: Run): Promise<Html> {
  const q = page.ctx.services
    .knex('run_logs')
    .where({ run_id: run.id })
    .where('seq', '>', Math.max(0, run.log_seq - LOG_LINES))
    .orderBy('seq');
  const debug = page.space!.scopes.has('runs:delete');
  if (!debug) q.whereNot('level', 'debug');
  const rows = (await q) as LogRow[];
  const entries = rows.map((r) => logDto(r, false));
  const earlier =
    run.log_seq > LOG_LINES
      ? html`<p class="help">The first ${run.log_seq - LOG_LINES} lines are not shown; read them with <code>GET /api/runs/${run.id}/logs</code>.</p>`
      : '';
  return html`<div class="log-tools" role="group" aria-label="Log filters">
<div class="field inline"><label for="log-level">Level</label><select id="log-level"><option value="">All levels\
</option><option value="info">Info and above</option><option value="warn">Warnings and errors</option><option \
value="error">Errors only</option></select></div>
<div class="field inline"><label for="log-text">Contains</label><input type="search" id="log-text" placeholder="Text in the message or kind"></div>
<button type="button" class="secondary" data-action="latest">Jump to latest</button>
<span class="help" id="log-count" role="status"></span>
</div>
${earlier}
<div class="log-box" id="log-box" tabindex="0" aria-label="Log lines">
<ol class="log" id="log-lines" \
data-last-seq="${entries.length ? entries[entries.length - 1].seq : Math.max(0, run.log_seq - LOG_LINES)}">${entries.map(logLine)}</ol>
<p class="empty" id="log-empty"${entries.length ? ' hidden' : ''}>No log lines yet.</p>
</div>
<template id="log-line-template">${logLine(null)}</template>`;
}

async function deliveriesPanel(page: PageContext, run: Run): Promise<Html> {
  if (!page.ctx.services.config.modules.has('webhooks')) return html`<p class="empty">Webhooks are not enabled on this service (MODULES).</p>`;
  const { scopes, orgRole } = page.space!;
  const reader = { spaceWebhooks: scopes.has('webhooks:read'), orgWebhooks: orgScopes(orgRole).has('org-webhooks:read') };
  if (!reader.spaceWebhooks && !reader.orgWebhooks) return html`<p class="empty">Seeing webhook deliveries needs the webhooks:read permission.</p>`;
  const rows = await runDeliveries(page.ctx.services.knex, run, reader);
  if (!rows.length) return html`<p class="empty">No delivery yet: no webhook you can see listens to this run's events, or they are on their way.</p>`;
  const body = rows.map(
    (d) =>
      html`<tr><td><code>${d.eventType}</code></td><td class="url"><a \
href="${page.space!.base}/webhooks/${d.webhookId}">${d.webhookUrl}</a></td>\
<td>${deliveryResult(d.status, d.statusCode)}</td><td class="num">${formatDuration(d.latency)}</td><td \
class="num">${d.attempt}</td><td>${d.error ?? ''}</td><td><time \
datetime="${d.createdAt}">${formatTime(d.createdAt)}</time></td></tr>`,
  );
  return html`<table class="data"><caption class="visually-hidden">Webhook deliveries of this run</caption><thead><tr>\
<th scope="col">Event</th><th scope="col">Webhook</th><th scope="col">Result</th><th scope="col" class="num">Latency\
</th><th scope="col" class="num">Attempt</th><th scope="col">Error</th><th scope="col">When</th></tr></thead>\
<tbody>${body}</tbody></table>`;
}

const TABS = [
  ['output', 'Output'],
  ['input', 'Input'],
  ['timeline', 'Timeline'],
  ['logs', 'Logs'],
  ['deliveries', 'Deliveries'],
] as const;

/** The run page; the replay form's refusal renders it again with its input and errors. */
export async function renderRunPage(
  page: PageContext<{ runId: string }>,
  o: { replayInput?: string; replayErrors?: FieldErrors; status?: number } = {},
): Promise<void> {
  const run = await readRun(page);
  const { knex } = page.ctx.services;
  const [head, output, timeline, logs, deliveries] = await Promise.all([
    summary(page, run),
    outputPanel(page, run),
    runTimeline(knex, run, 0, 1000),
    logsPanel(page, run),
    deliveriesPanel(page, run),
  ]);
  const panels: Record<string, Html> = {
    output: html`<div id="output-body" data-live-region>${output}</div>`,
    input: inputPanel(page, run, { input: o.replayInput, errors: o.replayErrors }),
    timeline: html`<div id="timeline-body" data-live-region>${timelineView(timeline.data, timeline.hasMore)}</div>`,
    logs,
    deliveries: html`<div id="deliveries-body" data-live-region>${deliveries}</div>`,
  };
  const selected = o.replayErrors ? 'input' : 'output';
  const base = page.space!.base;
  const { org, space } = page.space!;
  const stream = `/api/realtime/runs/${encodeURIComponent(run.id)}?orgId=${org.id}&spaceId=${space.id}&channels=run_update,run_log,run_metric`;
  sendConsolePage(page, {
    title: `Run ${run.id}`,
    status: o.status,
    current: 'runs',
    crumbs: [{ label: 'Runs', href: `${base}/runs` }, { label: run.id }],
    heading: html`<h1 class="run-title">Run <code id="run-id">${run.id}</code> <button type="button" class="small \
secondary" data-controller="copy" data-copy-target="run-id">Copy id</button></h1>`,
    body: html`<div class="run" data-controller="run-live" data-stream="${stream}" data-run-id="${run.id}" \
data-status="${run.status}" data-logs-url="/api/runs/${encodeURIComponent(run.id)}/logs">
<section id="run-summary" class="run-summary" aria-label="Summary" data-live-region>${head}</section>
<div class="tabs" data-controller="tabs" data-selected="${selected}">
<div role="tablist" aria-label="Run details">${TABS.map(
      ([id, label]) => html`<a role="tab" id="tab-${id}" \
href="#${id}" aria-controls="${id}">${label}</a>`,
    )}</div>
${TABS.map(
  ([id, label]) => html`<section id="${id}" role="tabpanel" aria-labelledby="tab-${id}" \
tabindex="0"${id === 'logs' ? html` data-controller="run-logs"` : ''}><h2 \
class="panel-heading">${label}</h2>${panels[id]}</section>`,
)}
</div>
<p class="visually-hidden" role="status" id="run-live-status"></p>
</div>`,
  });
}

export default definePage<{ runId: string }>({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/runs/:runId',
  context: 'space',
  scope: 'runs:read',
  handler: (page) => renderRunPage(page),
});
