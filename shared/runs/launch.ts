// Launching a run: organization limits checked atomically (SPEC 8.3), the row written, and
// the runAgent workflow started with the run id as workflow id. 201 follows at once; nothing
// waits for execution.
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import type { PlatformRunLimits } from '../config.ts';
import { problem } from '../errors.ts';
import { prepared } from '../db/prepared.ts';
import { newId } from '../ids.ts';
import { runsLaunched } from '../observability/metrics.ts';
import { withRunId } from '../observability/context.ts';
import { type InputFile, insertInputFiles } from '../files/run-inputs.ts';
import { agentForRun, type ResolvedAgent } from '../packages/resolve-agent.ts';
import { effectiveTimeoutSeconds } from '../packages/timeout.ts';
import { startRemoteRunWorkflow, startRunAgentWorkflow } from '../../temporal/starters/run-workflows.ts';
import { notifyRunEvent, RUN_EVENTS_CHANNEL, runEventPayload } from './events.ts';
import type { RunRow } from './model.ts';

export interface LaunchRequest {
  orgId: string;
  spaceId: string;
  agent: ResolvedAgent;
  input: Record<string, unknown>;
  actor: { type: RunRow['actor_type']; id: string };
  userId: string | null;
  endUserId?: string | null;
  scheduleId?: string | null;
  /** A deterministic id (a schedule tick retried by Temporal must not launch twice); random otherwise. */
  id?: string;
  /** Remote runs: the runner outside reports through a sink (hash of its secret, expiry). */
  remote?: { sinkSecretHash: string; sinkExpiresAt: Date };
  /** The connection each integration dependency uses: {<integration id>: <conn id>} (shared/integrations/readiness.ts). */
  connections?: Record<string, string>;
  /** The run's input files (shared/files/run-inputs.ts), written with the run. */
  files?: InputFile[];
}

/**
 * Inserts the run if the organization is under its rate and concurrency limits (migration 022's
 * `admit_run`: lock, counts, insert and the `pending` announcement in one round trip). Only
 * admitted runs spend the launch rate: a launch refused before its run exists (a scheduled tick
 * over the limits, its agent gone, its input invalid: `insertRefusedRun`) is recorded as a
 * `failed` run marked `refused`. `knex` may be a transaction (inline runs insert their package
 * first): the lock is then held until the caller commits.
 */
export async function admitRun(knex: Knex, limits: PlatformRunLimits, req: LaunchRequest): Promise<RunRow> {
  const files = req.files ?? [];
  // Input files are written with the run, under the same lock: a transaction around both.
  if (files.length > 0 && !knex.isTransaction) return knex.transaction((trx) => admitRun(trx, limits, req));
  const id = req.id ?? newId('run');
  const row = {
    id,
    org_id: req.orgId,
    space_id: req.spaceId,
    package_id: req.agent.packageId,
    package_version: req.agent.version,
    input: req.input,
    actor_type: req.actor.type,
    actor_id: req.actor.id,
    user_id: req.userId,
    end_user_id: req.endUserId ?? null,
    schedule_id: req.scheduleId ?? null,
    connections: req.connections ?? {},
    timeout_seconds: effectiveTimeoutSeconds(req.agent.timeoutSeconds, limits.timeout_ceiling_seconds),
    ...(req.remote
      ? { executor: 'remote', sandbox_mode: 'remote', sink_secret_hash: req.remote.sinkSecretHash, sink_expires_at: req.remote.sinkExpiresAt }
      : {}),
  };
  // Announced on commit: realtime streams show the new run while it is still pending.
  const event = runEventPayload({ kind: 'status', runId: id, orgId: req.orgId, spaceId: req.spaceId, status: 'pending' });
  let run: RunRow;
  try {
    const { rows } = await prepared(
      'admit-run',
      knex.raw<{ rows: RunRow[] }>('select * from admit_run(?, ?, ?::jsonb, ?, ?)', [
        limits.per_org_global_rate_per_min,
        limits.max_concurrent_per_org,
        JSON.stringify(row),
        RUN_EVENTS_CHANNEL,
        event,
      ]),
    );
    run = rows[0];
  } catch (err) {
    throw refusal(err, limits);
  }
  await insertInputFiles(knex, run, files);
  return run;
}

/** The problem for a refusal raised by `admit_run`; any other error as it is. */
function refusal(err: unknown, limits: PlatformRunLimits): unknown {
  const { message, detail } = err as { message?: string; detail?: string };
  if (message?.endsWith('org_run_rate_limited')) {
    const { recent, freeIn } = JSON.parse(detail!) as { recent: number; freeIn: number };
    return problem('org_run_rate_limited', {
      detail: `The organization launched ${recent} runs in the last minute (limit ${limits.per_org_global_rate_per_min})`,
      retryAfter: Math.max(1, Math.ceil(freeIn)),
    });
  }
  if (message?.endsWith('org_run_concurrency_exceeded')) {
    const { live } = JSON.parse(detail!) as { live: number };
    return problem('org_run_concurrency_exceeded', {
      detail: `The organization has ${live} runs pending or running (limit ${limits.max_concurrent_per_org})`,
      retryAfter: 5,
    });
  }
  return err;
}

export async function startRunWorkflow(knex: Knex, workflows: Client, run: RunRow, agent: ResolvedAgent): Promise<void> {
  try {
    // A remote run's workflow keeps its sink's deadline instead of running a sandbox. Traced, the
    // run id rides along (baggage) into the workflow's and its activities' spans.
    await withRunId(run.id, () =>
      run.executor === 'remote'
        ? startRemoteRunWorkflow(workflows, { ...run, sink_expires_at: run.sink_expires_at! }, agent.fullName)
        : startRunAgentWorkflow(workflows, run, agent.fullName),
    );
    runsLaunched.inc({ executor: run.executor, outcome: 'started' });
  } catch (err) {
    runsLaunched.inc({ executor: run.executor, outcome: 'queue_failed' });
    const [row] = await knex('runs')
      .where({ id: run.id, status: 'pending' })
      .update({ status: 'failed', error: `The run could not be queued: ${(err as Error).message}`, finished_at: knex.fn.now() })
      .returning(['org_id', 'space_id']);
    if (row) await notifyRunEvent(knex, { kind: 'status', runId: run.id, orgId: row.org_id, spaceId: row.space_id, status: 'failed' });
    throw problem('service_unavailable', 'The run could not be queued: the workflow service is unavailable');
  }
}

/**
 * A launch retried after its run was written (a schedule tick, a bulk replay page): a run still
 * `pending` whose workflow never started gets it now; any other run is left as it is.
 */
export async function ensureRunWorkflow(knex: Knex, workflows: Client, run: RunRow): Promise<void> {
  if (run.status !== 'pending') return;
  try {
    await workflows.workflow.getHandle(run.id).describe();
    return;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  const agent = await agentForRun(knex, run);
  if (agent) await startRunWorkflow(knex, workflows, run, agent);
}
