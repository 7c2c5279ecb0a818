// The run list's filters, all in the URL so a link shows the same rows: `status`, `agent`
// (@scope/name), `schedule` (sch_…), `endUser` (eu_…), and the time, either a `period` back
// from now (`1h`, `24h`, `7d`, `30d`) or `createdAfter` / `createdBefore` (UTC, as the form's
// datetime-local fields send them). A value that does not parse is reported beside its field
// and left out, never guessed.
import type { Knex } from 'knex';
import { LIVE_STATUSES, RUN_STATUSES, type RunStatus } from '../../../shared/runs/model.ts';
import type { FieldErrors } from '../forms.ts';

export const PERIODS: Record<string, { label: string; ms: number }> = {
  '1h': { label: 'Last hour', ms: 3600_000 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000 },
};

export interface RunFilters {
  status?: RunStatus;
  agent?: string;
  schedule?: string;
  endUser?: string;
  period?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

/** The names the filters take in the URL (and in the bulk cancel form, which carries them). */
export const FILTER_PARAMS = ['status', 'agent', 'schedule', 'endUser', 'period', 'createdAfter', 'createdBefore'] as const;

const AGENT = /^@[a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9-]*$/;

/** A datetime-local value (`2025-01-31T14:05`) or an ISO instant, read as UTC (every time field of the console). */
export function instant(raw: string): Date | undefined {
  const withZone = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(raw) ? `${raw}Z` : raw;
  const d = new Date(withZone);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

function one(v: string | string[] | null | undefined): string {
  return (Array.isArray(v) ? v[0] : (v ?? '')).trim();
}

export function parseRunFilters(get: (name: string) => string | string[] | null | undefined): { filters: RunFilters; errors: FieldErrors } {
  const filters: RunFilters = {};
  const errors: FieldErrors = {};
  const status = one(get('status'));
  if (status) {
    if ((RUN_STATUSES as readonly string[]).includes(status)) filters.status = status as RunStatus;
    else errors['filter-status'] = `There is no status “${status}”.`;
  }
  const agent = one(get('agent'));
  if (agent) {
    if (AGENT.test(agent)) filters.agent = agent;
    else errors['filter-agent'] = 'An agent is written @scope/name.';
  }
  const schedule = one(get('schedule'));
  if (schedule) {
    if (/^sch_[0-9A-Za-z]+$/.test(schedule)) filters.schedule = schedule;
    else errors['filter-schedule'] = 'A schedule id starts with sch_.';
  }
  const endUser = one(get('endUser'));
  if (endUser) {
    if (/^eu_[0-9A-Za-z]+$/.test(endUser)) filters.endUser = endUser;
    else errors['filter-endUser'] = 'An end-user id starts with eu_.';
  }
  const period = one(get('period'));
  if (period) {
    if (PERIODS[period]) filters.period = period;
    else errors['filter-period'] = 'Choose one of the periods listed.';
  }
  for (const name of ['createdAfter', 'createdBefore'] as const) {
    const raw = one(get(name));
    if (!raw) continue;
    const d = instant(raw);
    if (d) filters[name] = d;
    else errors[`filter-${name}`] = 'Write a date and time, e.g. 2025-01-31T14:05 (UTC).';
  }
  if (filters.createdAfter && filters.createdBefore && filters.createdAfter >= filters.createdBefore) {
    errors['filter-createdBefore'] = '“Created before” must be later than “created after”.';
    delete filters.createdBefore;
  }
  return { filters, errors };
}

/** The earliest creation time the filters allow (the period counts back from `now`). */
export function createdAfterOf(f: RunFilters, now = Date.now()): Date | undefined {
  const fromPeriod = f.period ? new Date(now - PERIODS[f.period].ms) : undefined;
  if (fromPeriod && f.createdAfter) return fromPeriod > f.createdAfter ? fromPeriod : f.createdAfter;
  return fromPeriod ?? f.createdAfter;
}

/** Narrows runs (`r` joined to `p`, shared/runs/visibility.ts) to the filters. */
export function applyRunFilters(q: Knex.QueryBuilder, f: RunFilters, now = Date.now()): Knex.QueryBuilder {
  if (f.status) q.where('r.status', f.status);
  if (f.agent) {
    const [scope, name] = f.agent.split('/');
    q.where({ 'p.scope': scope, 'p.name': name });
  }
  if (f.schedule) q.where('r.schedule_id', f.schedule);
  if (f.endUser) q.where('r.end_user_id', f.endUser);
  const after = createdAfterOf(f, now);
  if (after) q.where('r.created_at', '>', after);
  if (f.createdBefore) q.where('r.created_at', '<', f.createdBefore);
  return q;
}

/** The statuses a bulk cancel of these filters covers: the live ones they allow. */
export function cancellableStatuses(f: RunFilters): RunStatus[] {
  return f.status ? LIVE_STATUSES.filter((s) => s === f.status) : [...LIVE_STATUSES];
}

/** The filters as query parameters (empty ones left out): links keep them, paging included. */
export function filterQuery(f: RunFilters): URLSearchParams {
  const q = new URLSearchParams();
  if (f.status) q.set('status', f.status);
  if (f.agent) q.set('agent', f.agent);
  if (f.schedule) q.set('schedule', f.schedule);
  if (f.endUser) q.set('endUser', f.endUser);
  if (f.period) q.set('period', f.period);
  if (f.createdAfter) q.set('createdAfter', localValue(f.createdAfter));
  if (f.createdBefore) q.set('createdBefore', localValue(f.createdBefore));
  return q;
}

/** An instant as a datetime-local value in UTC, to the minute unless it has seconds. */
export function localValue(d: Date): string {
  const iso = d.toISOString();
  return d.getUTCSeconds() || d.getUTCMilliseconds() ? iso.slice(0, 23) : iso.slice(0, 16);
}

/** The filters in words, for a confirmation: “status failed, agent @acme/writer, created in the last 24 hours”. */
export function describeFilters(f: RunFilters): string {
  const parts: string[] = [];
  if (f.status) parts.push(`status ${f.status}`);
  if (f.agent) parts.push(`agent ${f.agent}`);
  if (f.schedule) parts.push(`schedule ${f.schedule}`);
  if (f.endUser) parts.push(`end-user ${f.endUser}`);
  if (f.period) parts.push(`created in the ${PERIODS[f.period].label.toLowerCase()}`);
  if (f.createdAfter) parts.push(`created after ${f.createdAfter.toISOString().replace('T', ' ').slice(0, 19)} UTC`);
  if (f.createdBefore) parts.push(`created before ${f.createdBefore.toISOString().replace('T', ' ').slice(0, 19)} UTC`);
  return parts.length ? parts.join(', ') : 'no filter: every run of the space you can see';
}
