// How runs look on console pages: the status badge, who or what launched a run, a duration that
// ticks while the run runs, and the run list's row. The run list and the run page both use them,
// and so can later pages (an agent's runs, a schedule's ticks).
import type { Knex } from 'knex';
import { isTerminal, type RunRow } from '../../../shared/runs/model.ts';
import { formatCost, formatCount, formatDuration, formatTime } from '../format.ts';
import { type Html, html } from '../html.ts';

type ListedRun = RunRow & { scope?: string; name?: string; ephemeral?: boolean };

const STATUS_LABEL: Record<string, string> = {
  pending: 'Pending',
  running: 'Running',
  success: 'Succeeded',
  failed: 'Failed',
  timeout: 'Timed out',
  cancelled: 'Cancelled',
};

export function statusBadge(status: string): Html {
  return html`<span class="badge status-${status}" data-status="${status}">${STATUS_LABEL[status] ?? status}</span>`;
}

export function statusLabel(status: string): string {
  return STATUS_LABEL[status] ?? status;
}

export function agentLabel(run: ListedRun): string {
  if (run.ephemeral) return 'inline agent';
  return run.scope && run.name ? `${run.scope}/${run.name}` : (run.package_full_name ?? run.package_id);
}

/**
 * The run's duration: fixed once it ended, ticking in the browser while it runs (console.js's
 * `ticker` counts from `data-since` with the same format).
 */
export function runDuration(run: Pick<RunRow, 'status' | 'started_at' | 'finished_at'>): Html {
  if (run.started_at && run.finished_at) return html`${formatDuration(run.finished_at.getTime() - run.started_at.getTime())}`;
  if (run.started_at && !isTerminal(run.status)) {
    return html`<span data-controller="ticker" data-since="${run.started_at.toISOString()}">${formatDuration(Date.now() - run.started_at.getTime())}</span>`;
  }
  return html`<span class="muted">${run.status === 'pending' ? 'waiting' : '—'}</span>`;
}

export function runTokens(run: Pick<RunRow, 'usage'>): string {
  const { inputTokens, outputTokens } = run.usage ?? { inputTokens: 0, outputTokens: 0 };
  return inputTokens || outputTokens ? formatCount(inputTokens + outputTokens) : '—';
}

export function runCost(run: Pick<RunRow, 'usage'>): string {
  const { inputTokens, outputTokens, costUsd } = run.usage ?? { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  return inputTokens || outputTokens || costUsd ? formatCost(costUsd) : '—';
}

/** Who or what launched each run, in words: a person's name, an API key's name, an end-user, a schedule. */
export async function launcherNames(knex: Knex, orgId: string, runs: Pick<RunRow, 'actor_type' | 'actor_id'>[]): Promise<Map<string, string>> {
  const ids = (type: string) => [...new Set(runs.filter((r) => r.actor_type === type).map((r) => r.actor_id))];
  const [users, keys, endUsers, schedules] = await Promise.all([
    ids('user').length ? knex('users').whereIn('id', ids('user')).select('id', 'name', 'email') : [],
    ids('api_key').length ? knex('api_keys').where('org_id', orgId).whereIn('id', ids('api_key')).select('id', 'name') : [],
    ids('end_user').length ? knex('end_users').where('org_id', orgId).whereIn('id', ids('end_user')).select('id', 'name', 'external_id') : [],
    ids('schedule').length ? knex('schedules').where('org_id', orgId).whereIn('id', ids('schedule')).select('id', 'name') : [],
  ]);
  const out = new Map<string, string>();
  for (const u of users) out.set(`user:${u.id}`, u.name || u.email);
  for (const k of keys) out.set(`api_key:${k.id}`, `API key “${k.name}”`);
  for (const e of endUsers) out.set(`end_user:${e.id}`, `End-user ${e.name || e.external_id}`);
  for (const s of schedules) out.set(`schedule:${s.id}`, `Schedule “${s.name}”`);
  return out;
}

export function launcherLabel(names: Map<string, string>, run: Pick<RunRow, 'actor_type' | 'actor_id'>): string {
  const kind: Record<string, string> = { user: 'Person', api_key: 'API key', end_user: 'End-user', schedule: 'Schedule' };
  return names.get(`${run.actor_type}:${run.actor_id}`) ?? `${kind[run.actor_type] ?? run.actor_type} ${run.actor_id}`;
}

/** One row of a run list; `actions` is what the row offers (a cancel button). */
export function runRow(base: string, run: ListedRun, launcher: string, actions: Html): Html {
  const href = `${base}/runs/${encodeURIComponent(run.id)}`;
  return html`<tr id="run-${run.id}" data-run-id="${run.id}" data-status="${run.status}">
<td>${statusBadge(run.status)}</td>
<td><a class="run-link" href="${href}"><code>${run.id}</code></a></td>
<td>${agentLabel(run)}<span class="muted">@${run.package_version}</span></td>
<td>${launcher}</td>
<td><time datetime="${run.created_at.toISOString()}">${formatTime(run.created_at)}</time></td>
<td class="num">${runDuration(run)}</td>
<td class="num">${runTokens(run)}</td>
<td class="num">${runCost(run)}</td>
<td class="actions">${actions}</td>
</tr>`;
}
