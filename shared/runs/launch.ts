// Launching a run: organization limits checked atomically (SPEC 8.3), the row written, and
// the runAgent workflow started with the run id as workflow id. 201 follows at once; nothing
// waits for execution.
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import type { PlatformRunLimits } from '../config.ts';
import { problem } from '../errors.ts';
import { newId } from '../ids.ts';
import { runsLaunched } from '../observability/metrics.ts';
import { withRunId } from '../observability/context.ts';
import { type InputFile, insertInputFiles } from '../files/run-inputs.ts';
import { agentForRun, type ResolvedAgent } from '../packages/resolve-agent.ts';
import { effectiveTimeoutSeconds } from '../packages/timeout.ts';
import { OrgIdKey, PackageIdKey, RunStatusKey, SpaceIdKey } from '../../temporal/search-attributes.ts';
import { notifyRunEvent } from './events.ts';
import { LIVE_STATUSES, type RunRow } from './model.ts';

export const AGENT_RUNS_TASK_QUEUE = 'agent-runs';

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
 * The runs that spend the organization's launch rate: those admitted here. A launch refused
 * before its run exists (a scheduled tick over the limits, its agent gone, its input invalid:
 * `insertRefusedRun`) is still recorded as a `failed` run, marked `refused`.
 */
const ADMITTED = 'not refused';

/**
 * Inserts the run if the organization is under its rate and concurrency limits. `knex` may be a
 * transaction (inline runs insert their package first): the check then runs in a savepoint and
 * the lock is held until the caller commits.
 */
export async function admitRun(knex: Knex, limits: PlatformRunLimits, req: LaunchRequest): Promise<RunRow> {
  return knex.transaction(async (trx) => {
    // One launcher per organization at a time: the counts below cannot be raced.
    await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`runs:${req.orgId}`]);
    const launched = `created_at > now() - interval '60 seconds' and ${ADMITTED}`;
    const counts = await trx('runs')
      .where({ org_id: req.orgId })
      .where((w) => w.whereIn('status', LIVE_STATUSES).orWhere('created_at', '>', trx.raw("now() - interval '60 seconds'")))
      .select(
        trx.raw(`count(*) filter (where status in ('pending','running'))::int as live`),
        trx.raw(`count(*) filter (where ${launched})::int as recent`),
        trx.raw(`extract(epoch from (min(created_at) filter (where ${launched}) + interval '60 seconds' - now())) as free_in`),
      )
      .first();
    if (counts.recent >= limits.per_org_global_rate_per_min) {
      const retryAfter = Math.max(1, Math.ceil(Number(counts.free_in)));
      throw problem('org_run_rate_limited', {
        detail: `The organization launched ${counts.recent} runs in the last minute (limit ${limits.per_org_global_rate_per_min})`,
        retryAfter,
      });
    }
    if (counts.live >= limits.max_concurrent_per_org) {
      throw problem('org_run_concurrency_exceeded', {
        detail: `The organization has ${counts.live} runs pending or running (limit ${limits.max_concurrent_per_org})`,
        retryAfter: 5,
      });
    }
    const [row] = await trx('runs')
      .insert({
        id: req.id ?? newId('run'),
        org_id: req.orgId,
        space_id: req.spaceId,
        package_id: req.agent.packageId,
        package_version: req.agent.version,
        status: 'pending',
        input: JSON.stringify(req.input),
        actor_type: req.actor.type,
        actor_id: req.actor.id,
        user_id: req.userId,
        end_user_id: req.endUserId ?? null,
        schedule_id: req.scheduleId ?? null,
        connections: JSON.stringify(req.connections ?? {}),
        timeout_seconds: effectiveTimeoutSeconds(req.agent.timeoutSeconds, limits.timeout_ceiling_seconds),
        ...(req.remote
          ? { executor: 'remote', sandbox_mode: 'remote', sink_secret_hash: req.remote.sinkSecretHash, sink_expires_at: req.remote.sinkExpiresAt }
          : {}),
      })
      .returning('*');
    await insertInputFiles(trx, row as RunRow, req.files ?? []);
    // Announced on commit: realtime streams show the new run while it is still pending.
    await notifyRunEvent(trx, { kind: 'status', runId: row.id, orgId: req.orgId, spaceId: req.spaceId, status: 'pending' });
    return row as RunRow;
  });
}

export async function startRunWorkflow(knex: Knex, workflows: Client, run: RunRow, agent: ResolvedAgent): Promise<void> {
  try {
    // A remote run's workflow keeps its sink's deadline instead of running a sandbox.
    const remote = run.executor === 'remote';
    // Traced, the run id rides along (baggage) into the workflow's and its activities' spans.
    await withRunId(run.id, () => workflows.workflow.start(remote ? 'remoteRun' : 'runAgent', {
      taskQueue: AGENT_RUNS_TASK_QUEUE,
      workflowId: run.id,
      // Its activities inherit the key: when runs wait for sandbox slots, each organization gets
      // its share of them in turn instead of queueing behind another's burst (DESIGN.md 8).
      priority: { fairnessKey: run.org_id },
      args: [{ runId: run.id, timeoutSeconds: run.timeout_seconds, orgId: run.org_id, ...(remote ? { sinkExpiresAt: run.sink_expires_at!.toISOString() } : {}) }],
      typedSearchAttributes: [
        { key: OrgIdKey, value: run.org_id },
        { key: SpaceIdKey, value: run.space_id },
        { key: PackageIdKey, value: agent.fullName },
        { key: RunStatusKey, value: 'pending' },
      ],
    }));
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

