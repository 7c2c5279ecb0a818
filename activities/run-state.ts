// Run state transitions. Each is idempotent: Temporal may retry it after a crash.
import { ApplicationFailure } from '@temporalio/activity';
import type { Knex } from 'knex';
import { assertValid, userSchemaValidator } from '../shared/validation.ts';
import { ProblemError } from '../shared/errors.ts';
import { NOTIFICATION_TYPES, notifyRunEnded } from '../shared/notifications/create.ts';
import { runDuration, runsEnded } from '../shared/observability/metrics.ts';
import { notifyRunEvent, RUN_EVENTS_CHANNEL, runEventNotifySql } from '../shared/runs/events.ts';
import { appendRunLog, MAX_LOG_MESSAGE } from '../shared/runs/logs.ts';
import { pendingOutput } from '../shared/runs/pending-output.ts';
import { LIVE_STATUSES, RUN_SELECT, type RunRow, type RunStatus, runsWithPackage } from '../shared/runs/model.ts';
import { agentForRun, type ResolvedAgent } from '../shared/packages/resolve-agent.ts';
import type { ActivityDeps } from './deps.ts';
import { deleteWorkspaceCheckpoints } from './sandbox/checkpoints.ts';

/**
 * How a run ended, as its workflow decided. A success carries its output, or when that is large
 * the reference of the row that keeps it (shared/runs/pending-output.ts).
 */
export type RunOutcome = { status: 'success'; output?: unknown; outputRef?: string } | { status: 'failed' | 'timeout' | 'cancelled'; error: string };

/** A success with its output: the one it carries, else the one its reference names. */
async function withOutput(knex: Knex, runId: string, outcome: RunOutcome): Promise<RunOutcome> {
  if (outcome.status !== 'success' || outcome.output !== undefined) return outcome;
  const kept = outcome.outputRef ? await pendingOutput(knex, runId, outcome.outputRef) : undefined;
  if (kept) return { status: 'success', output: kept.output };
  return { status: 'failed', error: 'The agent finished, but its output was not kept; run it again' };
}

/**
 * Checks the output against the agent's output schema (shared/validation.ts, as the API checks
 * inputs: tenant patterns in linear time, within a work budget); a mismatch fails the run with
 * the errors, and so does a schema stored before its patterns were checked, saying why.
 */
export function judgeOutput(outputSchema: object | null, output: unknown): RunOutcome {
  if (!outputSchema) return { status: 'success', output };
  let validate: ReturnType<typeof userSchemaValidator>;
  try {
    validate = userSchemaValidator(outputSchema);
  } catch (err) {
    if (!(err instanceof ProblemError)) throw err;
    return { status: 'failed', error: `The output schema cannot be used: ${(err.errors ?? []).map((e) => e.message).join('; ')}` };
  }
  try {
    assertValid(validate, output);
    return { status: 'success', output };
  } catch (err) {
    if (!(err instanceof ProblemError)) throw err;
    const list = (err.errors ?? []).map((e) => `${e.field}: ${e.message}`).join('; ');
    return { status: 'failed', error: `The output does not match the output schema: ${list}` };
  }
}

/** Tries of `startRun` before the attempt fails: a database blip must not fail the run. */
const START_TRIES = 4;

/**
 * pending -> running, with its log line and its log and status events, when an attempt holds a
 * sandbox slot (executeAgent; runs begun before worker run slots were marked by their workflow);
 * every attempt records its sandbox mode. One statement, so it either happened with its
 * announcements (sent at commit; the payloads are those of `runEventPayload`) or not at all, and
 * is tried again after a failure. The run's `started_at` (null when it never started).
 */
export async function startRun(knex: Knex, runId: string, sandboxMode: string): Promise<Date | null> {
  for (let tried = 1; ; tried++) {
    try {
      const {
        rows: [row],
      } = await knex.raw(
        `with started as (
           update runs set status = 'running', started_at = now(), sandbox_mode = :mode, log_seq = log_seq + 1
           where id = :runId and status = 'pending'
           returning id, org_id, space_id, started_at, log_seq, status
         ), logged as (
           insert into run_logs (run_id, seq, level, type, message) select id, log_seq, 'info', 'status', 'Run started' from started
         )
         select started_at,
                ${runEventNotifySql(':channel', 'log', 'id', { seq: 'log_seq' })},
                ${runEventNotifySql(':channel', 'status', 'id', { status: 'status' })}
           from started`,
        { mode: sandboxMode, runId, channel: RUN_EVENTS_CHANNEL },
      );
      if (row) return row.started_at;
      const [again] = await knex('runs').where({ id: runId }).update({ sandbox_mode: sandboxMode }).returning('started_at');
      return again?.started_at ?? null;
    } catch (err) {
      if (tried >= START_TRIES) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** tried));
    }
  }
}

type LoadedRun = RunRow & { scope: string; name: string };
type EndedRow = {
  id: string;
  status: RunStatus;
  org_id: string;
  space_id: string;
  user_id: string | null;
  schedule_id: string | null;
  error: string | null;
  log_seq: number;
};

/**
 * Only while runAgent cannot have decided otherwise: no cancel asked for through the API, and the
 * run's timeout more than a second away on the database's clock (runAgent's timer starts no
 * sooner than `started_at`).
 */
const UNCONTESTED = `cancel_requested_at is null and started_at + make_interval(secs => timeout_seconds - 1) > clock_timestamp()`;

/**
 * Writes a live run's terminal status once (a success judged against the output schema), with
 * its log line and notification (failed, timeout) in the same transaction, and announces them
 * (the log line's event, then the status's, sent at commit; the payloads of `runEventPayload`).
 * The status the run has now. `uncontested`: executeAgent's attempt ending its run as soon as it
 * succeeded, a Temporal round trip before finalizeRun could (which then finds it written); nothing
 * is written when a cancel was asked for, the timeout is near, or a later attempt took the run
 * (`live_attempt`, sidecar/journal.ts): undefined is returned. A status
 * without a notification (success, cancelled) is one statement, without a transaction around it:
 * a run's end waits for one round trip to Postgres, not four.
 */
export async function endRun(
  knex: Knex,
  run: LoadedRun,
  agent: ResolvedAgent | undefined,
  outcome: RunOutcome,
  opts: { uncontested?: { attempt: number } } = {},
): Promise<RunStatus | undefined> {
  let final = outcome;
  if (outcome.status === 'success') {
    if (!agent) throw ApplicationFailure.nonRetryable(`agent version ${run.package_version} of run ${run.id} is gone`);
    final = judgeOutput(agent.outputSchema, outcome.output);
  }
  const end = async (db: Knex): Promise<EndedRow | undefined> => {
    const {
      rows: [ended],
    } = await db.raw(
      `with ended as (
         update runs set status = ?, result = ?, error = ?, finished_at = now(), log_seq = log_seq + 1
         where id = ? and status = any(?) ${opts.uncontested ? `and ${UNCONTESTED} and live_attempt <= ?` : ''}
         returning id, status, org_id, space_id, user_id, schedule_id, error, log_seq
       ), cleared as (
         delete from pending_outputs where run_id in (select id from ended)
       ), logged as (
         insert into run_logs (run_id, seq, level, type, message) select id, log_seq, ?, 'status', ? from ended
       )
       select ended.*,
              ${runEventNotifySql('?', 'log', 'id', { seq: 'log_seq' })},
              ${runEventNotifySql('?', 'status', 'id', { status: 'status' })}
         from ended`,
      [
        final.status,
        final.status === 'success' ? JSON.stringify({ output: final.output }) : null,
        final.status === 'success' ? null : final.error,
        run.id,
        [...LIVE_STATUSES],
        ...(opts.uncontested ? [opts.uncontested.attempt] : []),
        final.status === 'success' ? 'info' : 'error',
        (final.status === 'success' ? 'Run succeeded' : `Run ${final.status}: ${final.error}`).slice(0, MAX_LOG_MESSAGE),
        RUN_EVENTS_CHANNEL,
        RUN_EVENTS_CHANNEL,
      ],
    );
    return ended;
  };
  // Statuses a notification reports (failed, timeout) write it in the same transaction.
  const notified = (NOTIFICATION_TYPES as readonly string[]).includes(`run.${final.status}`);
  const row = notified
    ? await knex.transaction(async (trx) => {
        const ended = await end(trx);
        if (ended) await notifyRunEnded(trx, ended, `${run.scope}/${run.name}`);
        return ended;
      })
    : await end(knex);
  if (!row) return opts.uncontested ? undefined : (await knex('runs').where({ id: run.id }).first('status')).status;
  runsEnded.inc({ status: row.status });
  // started_at stays null for a run that never started: its duration is null, not 0.
  if (run.started_at) runDuration.observe({ status: row.status }, Math.max(0, Date.now() - new Date(run.started_at).getTime()) / 1000);
  return row.status;
}

export function createRunStateActivities(deps: ActivityDeps) {
  const { knex } = deps;
  return {
    /**
     * pending -> running, called by every run workflow once its run holds a slot: a sandbox run's
     * executeAgent has usually written it already (startRun), remote runs and runs begun before
     * worker run slots are written here. True when the run has started, by whichever, false when
     * it ended without starting.
     */
    async markRunRunning(runId: string): Promise<boolean> {
      const [row] = await knex('runs')
        .where({ id: runId, status: 'pending' })
        .update({ status: 'running', started_at: knex.fn.now() })
        .returning(['org_id', 'space_id']);
      if (!row) return Boolean((await knex('runs').where({ id: runId }).first('started_at'))?.started_at);
      await appendRunLog(knex, runId, { level: 'info', type: 'status', message: 'Run started' });
      await notifyRunEvent(knex, { kind: 'status', runId, orgId: row.org_id, spaceId: row.space_id, status: 'running' });
      return true;
    },

    /**
     * Writes the terminal status once (validating a success against the output schema), then
     * deletes the run's workspace checkpoints, whatever the status: the status and its
     * announcements go first, and a delete that fails is left to the file sweep.
     */
    async finalizeRun(runId: string, outcome: RunOutcome): Promise<RunStatus> {
      const status = await writeFinalStatus(runId, outcome);
      await deleteWorkspaceCheckpoints(deps.files, runId).catch((err) =>
        deps.log.warn({ err, runId }, 'workspace checkpoints not deleted: the file sweep will'),
      );
      return status;
    },
  };

  async function writeFinalStatus(runId: string, outcome: RunOutcome): Promise<RunStatus> {
    const run = (await runsWithPackage(knex).where('r.id', runId).select(RUN_SELECT).first()) as LoadedRun | undefined;
    if (!run) return 'cancelled'; // nothing left to finalize
    if (!LIVE_STATUSES.includes(run.status)) return run.status; // written already (by executeAgent on success, or a retried finalize)
    const decided = await withOutput(knex, runId, outcome);
    const agent = decided.status === 'success' ? await agentForRun(knex, run) : undefined;
    return (await endRun(knex, run, agent, decided)) as RunStatus; // always a status when not `uncontested`
  }
}
