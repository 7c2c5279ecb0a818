// Run state transitions. Each is idempotent: Temporal may retry it after a crash.
import { ApplicationFailure } from '@temporalio/activity';
import { assertValid, userSchemaValidator } from '../shared/validation.ts';
import { ProblemError } from '../shared/errors.ts';
import { notifyRunEnded } from '../shared/notifications/create.ts';
import { runDuration, runsEnded } from '../shared/observability/metrics.ts';
import { notifyRunEvent } from '../shared/runs/events.ts';
import { appendRunLog } from '../shared/runs/logs.ts';
import { LIVE_STATUSES, type RunStatus } from '../shared/runs/model.ts';
import type { ActivityDeps } from './deps.ts';
import { loadRunWithAgent } from './load-run.ts';

export type RunOutcome =
  | { status: 'success'; output: unknown }
  | { status: 'failed' | 'timeout' | 'cancelled'; error: string };

/** Checks the output against the agent's output schema; a mismatch fails the run with the errors. */
export function judgeOutput(outputSchema: object | null, output: unknown): RunOutcome {
  if (!outputSchema) return { status: 'success', output };
  try {
    assertValid(userSchemaValidator(outputSchema), output);
    return { status: 'success', output };
  } catch (err) {
    if (!(err instanceof ProblemError)) throw err;
    const list = (err.errors ?? []).map((e) => `${e.field}: ${e.message}`).join('; ');
    return { status: 'failed', error: `The output does not match the output schema: ${list}` };
  }
}

export function createRunStateActivities(deps: ActivityDeps) {
  const { knex } = deps;
  return {
    /** pending -> running; emits run.started. False when the run was no longer pending. */
    async markRunRunning(runId: string): Promise<boolean> {
      const [row] = await knex('runs')
        .where({ id: runId, status: 'pending' })
        .update({ status: 'running', started_at: knex.fn.now() })
        .returning(['org_id', 'space_id']);
      if (!row) return false;
      await appendRunLog(knex, runId, { level: 'info', type: 'status', message: 'Run started' });
      await notifyRunEvent(knex, { kind: 'status', runId, orgId: row.org_id, spaceId: row.space_id, status: 'running' });
      return true;
    },

    /** Writes the terminal status once (validating a success against the output schema). */
    async finalizeRun(runId: string, outcome: RunOutcome): Promise<RunStatus> {
      const loaded = await loadRunWithAgent(knex, runId);
      if (!loaded) return 'cancelled'; // nothing left to finalize
      const { run, agent } = loaded;
      if (!LIVE_STATUSES.includes(run.status)) return run.status;
      let final = outcome;
      if (outcome.status === 'success') {
        if (!agent) throw ApplicationFailure.nonRetryable(`agent version ${run.package_version} of run ${runId} is gone`);
        final = judgeOutput(agent.outputSchema, outcome.output);
      }
      // The terminal status and its notification (failed, timeout) commit together.
      const row = await knex.transaction(async (trx) => {
        const [ended] = await trx('runs')
          .where({ id: runId })
          .whereIn('status', LIVE_STATUSES)
          .update({
            status: final.status,
            result: final.status === 'success' ? JSON.stringify({ output: final.output }) : null,
            error: final.status === 'success' ? null : final.error,
            // started_at stays null for a run that never started: its duration is null, not 0.
            finished_at: knex.fn.now(),
          })
          .returning(['id', 'status', 'org_id', 'space_id', 'user_id', 'schedule_id', 'error']);
        const pkg = run as typeof run & { scope: string; name: string }; // loadRunWithAgent joins the package
        if (ended) await notifyRunEnded(trx, ended, `${pkg.scope}/${pkg.name}`);
        return ended;
      });
      if (!row) return (await knex('runs').where({ id: runId }).first()).status;
      runsEnded.inc({ status: row.status });
      if (run.started_at) runDuration.observe({ status: row.status }, Math.max(0, Date.now() - new Date(run.started_at).getTime()) / 1000);
      await appendRunLog(knex, runId, {
        level: final.status === 'success' ? 'info' : 'error',
        type: 'status',
        message: final.status === 'success' ? 'Run succeeded' : `Run ${final.status}: ${final.error}`,
      });
      await notifyRunEvent(knex, { kind: 'status', runId, orgId: row.org_id, spaceId: row.space_id, status: row.status });
      return row.status;
    },
  };
}
