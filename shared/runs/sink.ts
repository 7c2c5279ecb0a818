// The sink of a remote run: what a runner outside the service reports through, authenticated
// by a per-run secret (only its SHA-256 is stored). Logs and usage are written here directly;
// every change of the run's state (start, final report, extension) goes through the run's
// `remoteRun` workflow as a Temporal update, so the workflow stays the one writer of status.
import { ApplicationFailure, type Client, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Knex } from 'knex';
import { extendSink, finishRemoteRun, type RemoteReport, SINK_EXPIRED, SINK_EXPIRED_ERROR, startRemoteRun } from '../../temporal/contract/runs.ts';
import { safeEqual, sha256Hex } from '../crypto.ts';
import { problem } from '../errors.ts';
import { randomBase62 } from '../ids.ts';
import { notifyRunEvent } from './events.ts';
import { appendRunLog, type LogLevel } from './logs.ts';
import { isTerminal, type RunRow, type RunUsage } from './model.ts';
import { carryOutput } from './pending-output.ts';

export const SINK_SECRET_PREFIX = 'sink_';
/** Sink lifetime when the launch or the extension names none, and the bounds of both. */
export const SINK_TTL = { default: 300, min: 5, max: 3600 } as const;
/** Events one sink call may carry. */
export const MAX_SINK_EVENTS = 100;

export function newSinkSecret(): { secret: string; hash: string } {
  const secret = SINK_SECRET_PREFIX + randomBase62(40);
  return { secret, hash: sha256Hex(secret) };
}

/** The remote run a sink secret opens; 401 for anything else (an unknown run included, so ids cannot be probed). */
export async function runForSinkSecret(knex: Knex, runId: string, secret: string): Promise<RunRow> {
  const run = (await knex('runs').where({ id: runId, executor: 'remote' }).first()) as RunRow | undefined;
  if (!run?.sink_secret_hash || !secret.startsWith(SINK_SECRET_PREFIX) || !safeEqual(run.sink_secret_hash, sha256Hex(secret))) {
    throw problem('unauthorized', 'The sink secret does not open this run');
  }
  return run;
}

export type SinkEvent =
  | { type: 'started' }
  | { type: 'log'; level: LogLevel; message: string; data?: unknown }
  | { type: 'metric'; usage: RunUsage }
  | { type: 'result'; output: unknown }
  | { type: 'failure'; error: string };

/** Refuses anything more for a run that ended: 410 when its sink's expiry ended it, else 409. */
function assertRunNotEnded(run: RunRow): void {
  if (!isTerminal(run.status)) return;
  if (run.error?.startsWith(SINK_EXPIRED_ERROR)) {
    throw problem('sink_expired', `The sink expired at ${run.sink_expires_at!.toISOString()}; the run ended ${run.status}`);
  }
  throw problem('run_finished', `The run already ended ${run.status}`);
}

/** Refuses reports to a run that ended (409) or whose sink expired (410). */
function assertSinkOpen(run: RunRow): void {
  assertRunNotEnded(run);
  if (run.sink_expires_at && run.sink_expires_at.getTime() <= Date.now()) {
    throw problem('sink_expired', `The sink expired at ${run.sink_expires_at.toISOString()}; the run is ending`);
  }
}

/** Runs a state update on the run's workflow; one it refuses is 410 (sink expired) or 409 (run ended). */
async function update<R>(workflows: Client, runId: string, call: (h: ReturnType<Client['workflow']['getHandle']>) => Promise<R>): Promise<R> {
  try {
    return await call(workflows.workflow.getHandle(runId));
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure && err.cause.type === SINK_EXPIRED) {
      throw problem('sink_expired', `${err.cause.message}; the run is ending`);
    }
    if (err instanceof WorkflowUpdateFailedError || err instanceof WorkflowNotFoundError) {
      throw problem('run_finished', 'The run has ended; its sink accepts nothing more');
    }
    throw err;
  }
}

export interface SinkAck {
  accepted: number;
  status: string;
}

/** Applies a batch of reports in order; a final report (`result` or `failure`) must come last. */
export async function applySinkEvents(knex: Knex, workflows: Client, run: RunRow, events: SinkEvent[]): Promise<SinkAck> {
  const final = events.findIndex((e) => e.type === 'result' || e.type === 'failure');
  if (final !== -1 && final !== events.length - 1) {
    const field = `events.${final}`;
    throw problem('validation_failed', {
      detail: `${field}: a final report must be the last event`,
      errors: [{ field, code: 'invalid_value', message: 'a final report must be the last event' }],
    });
  }
  assertSinkOpen(run);
  let status: string = run.status;
  // Any report means the runner is at work: the run starts with the first one.
  if (status === 'pending') status = await update(workflows, run.id, (h) => h.executeUpdate(startRemoteRun));
  for (const e of events) {
    if (e.type === 'log') await appendRunLog(knex, run.id, { level: e.level, type: 'runner', message: e.message, data: e.data });
    else if (e.type === 'metric') {
      await knex('runs')
        .where({ id: run.id })
        .update({ usage: JSON.stringify(e.usage) });
      await notifyRunEvent(knex, { kind: 'usage', runId: run.id, orgId: run.org_id, spaceId: run.space_id });
    } else if (e.type === 'result' || e.type === 'failure') {
      // A large output is kept in the database and the update carries its reference: a result
      // may reach the API's body limit, and a payload over 2 MB fails the update.
      const report: RemoteReport =
        e.type === 'result' ? { status: 'success', ...(await carryOutput(knex, run.id, e.output)) } : { status: 'failed', error: e.error };
      status = await update(workflows, run.id, (h) => h.executeUpdate(finishRemoteRun, { args: [report] }));
    }
  }
  return { accepted: events.length, status };
}

/**
 * Pushes the sink's expiry back to now + seconds. The workflow owns the deadline and decides
 * whether the sink is still open (the stored expiry may lag behind it); the row follows, and
 * only ever forward, so concurrent extensions leave the workflow's value.
 */
export async function extendRunSink(knex: Knex, workflows: Client, run: RunRow, seconds: number): Promise<Date> {
  assertRunNotEnded(run);
  const expiresAt = new Date(await update(workflows, run.id, (h) => h.executeUpdate(extendSink, { args: [seconds] })));
  await knex('runs').where({ id: run.id }).where('sink_expires_at', '<', expiresAt).update({ sink_expires_at: expiresAt });
  return expiresAt;
}
