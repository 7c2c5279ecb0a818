// Where a run's time goes, as the benchmarks print it (issue 33): the moments of one run from its
// POST to the `?wait=` answer, on one clock (the machine's: the client, Postgres and Temporal run
// on it), from the client, the run's own timestamps (row and log lines) and its workflow's
// history (Temporal's event times). Each moment is taken as milliseconds after the POST was sent;
// `timelineTable` prints the p50 of each over many runs, in the order of the median run.
import type { Client as TemporalClient } from '@temporalio/client';
import type { Client as Http } from '../support/api.ts';
import { pct } from './report.ts';

/** Moments of one run, ms after its POST was sent; a moment the run did not have is absent. */
export type RunTimeline = Record<string, number>;

type Timestamp = { seconds?: { toString(): string } | number | null; nanos?: number | null } | null | undefined;
const ms = (ts: Timestamp) => (ts ? Number(String(ts.seconds ?? 0)) * 1000 + (ts.nanos ?? 0) / 1e6 : Number.NaN);

/** The history events worth naming, by the attributes field that tells their type. */
const EVENTS: Array<[field: string, name: string]> = [
  ['workflowExecutionStartedEventAttributes', 'workflow started'],
  ['workflowTaskScheduledEventAttributes', 'workflow task scheduled'],
  ['workflowTaskStartedEventAttributes', 'workflow task started'],
  ['workflowTaskCompletedEventAttributes', 'workflow task completed'],
  ['activityTaskScheduledEventAttributes', 'activity scheduled'],
  ['activityTaskStartedEventAttributes', 'activity started'],
  ['activityTaskCompletedEventAttributes', 'activity completed'],
  ['workflowExecutionSignaledEventAttributes', 'signal received'],
  ['timerStartedEventAttributes', 'timer started'],
  ['markerRecordedEventAttributes', 'marker'],
  ['upsertWorkflowSearchAttributesEventAttributes', 'search attributes'],
  ['workflowExecutionCompletedEventAttributes', 'workflow completed'],
];

/**
 * The run's moments: `sentAt` and `answeredAt` are the client's (Date.now()), `extra` moments the
 * caller saw (e.g. the model's requests, epoch ms). Repeated events are numbered (`workflow task
 * started #2`).
 */
export async function runTimeline(
  http: Http,
  temporal: TemporalClient,
  runId: string,
  client: { sentAt: number; ackAt: number; answeredAt: number },
  extra: Record<string, number> = {},
): Promise<RunTimeline> {
  const at = (epochMs: number) => Math.round((epochMs - client.sentAt) * 10) / 10;
  const out: RunTimeline = { 'POST answered': at(client.ackAt) };
  const run = (await http.get(`/api/runs/${runId}`)).body;
  out['run created (createdAt)'] = at(Date.parse(run.createdAt));
  if (run.startedAt) out['run running (startedAt)'] = at(Date.parse(run.startedAt));
  if (run.finishedAt) out['run ended (finishedAt)'] = at(Date.parse(run.finishedAt));
  out['?wait= answered'] = at(client.answeredAt);
  const logs = (await http.get(`/api/runs/${runId}/logs?limit=100`)).body;
  for (const entry of logs.data ?? []) {
    if (entry.kind === 'output') out['log: output recorded'] = at(Date.parse(entry.createdAt));
  }
  for (const [name, epochMs] of Object.entries(extra)) out[name] = at(epochMs);
  const history = await temporal.workflow.getHandle(runId).fetchHistory();
  const seen = new Map<string, number>();
  for (const event of history.events ?? []) {
    const found = EVENTS.find(([field]) => (event as Record<string, unknown>)[field]);
    if (!found) continue;
    const n = (seen.get(found[1]) ?? 0) + 1;
    seen.set(found[1], n);
    out[n === 1 ? found[1] : `${found[1]} #${n}`] = at(ms(event.eventTime as Timestamp));
  }
  return out;
}

/** p50 of each moment over `timelines`, ordered by it; moments fewer than half the runs had are left out. */
export function timelineP50(timelines: RunTimeline[]): Array<[name: string, p50: number]> {
  const names = new Set(timelines.flatMap((t) => Object.keys(t)));
  const rows: Array<[string, number]> = [];
  for (const name of names) {
    const values = timelines.map((t) => t[name]).filter((v) => v !== undefined && Number.isFinite(v));
    if (values.length >= timelines.length / 2) rows.push([name, pct(values, 50)]);
  }
  return rows.sort((a, b) => a[1] - b[1]);
}

/** Prints the p50 moments with the step from the one before. */
export function printTimeline(rows: Array<[string, number]>, title: string): void {
  console.log(`\n${title}`);
  console.log(`${'moment (p50, ms after the POST was sent)'.padEnd(44)}${'at'.padStart(8)}${'step'.padStart(8)}`);
  let previous = 0;
  for (const [name, p50] of rows) {
    console.log(`${name.padEnd(44)}${p50.toFixed(1).padStart(8)}${(p50 - previous).toFixed(1).padStart(8)}`);
    previous = p50;
  }
}
