// One tick of a schedule (SPEC 2.8, 3.1): launch a run as the schedule's creator, or record
// why it could not start as a `failed` run (a missing connection records no run: it publishes
// `run.connection_missing` instead, DESIGN.md 7). Idempotent: the run id derives from the tick's
// workflow id, so a retried activity finds its run instead of launching a second one.
import { ProblemError } from '../shared/errors.ts';
import { deterministicEventId } from '../shared/events/publish.ts';
import { type InputFile, resolveInputFiles } from '../shared/files/run-inputs.ts';
import { requireConnections } from '../shared/integrations/readiness.ts';
import { type ResolvedAgent, resolveAgent } from '../shared/packages/resolve-agent.ts';
import { latestVersion } from '../shared/packages/store.ts';
import { effectiveTimeoutSeconds } from '../shared/packages/timeout.ts';
import { fullName, type PackageRow } from '../shared/packages/types.ts';
import { admitRun, ensureRunWorkflow, startRunWorkflow } from '../shared/runs/launch.ts';
import type { OwnerColumns, RunRow, RunStatus } from '../shared/runs/model.ts';
import { insertRefusedRun } from '../shared/runs/refused.ts';
import { creatorCanRun, disableSchedule, lostAccessReason } from '../shared/schedules/access.ts';
import type { ScheduleRow } from '../shared/schedules/model.ts';
import { deleteTemporalSchedule, pauseTemporalSchedule } from '../shared/schedules/temporal.ts';
import { runInput } from '../shared/validation.ts';
import type { ActivityDeps } from './deps.ts';

export interface TickInput {
  scheduleId: string;
  /** The tick's workflow id (Temporal appends the scheduled time to `tick:<sch id>`). */
  tickId: string;
}

export interface TickResult {
  runId: string;
  status: RunStatus;
}

/** run_ + 24 base62 of a SHA-256 of the tick id (the event-id derivation, another prefix). */
export function tickRunId(tickId: string): string {
  return `run_${deterministicEventId(`tick:${tickId}`).slice('evt_'.length)}`;
}

/** A problem as one sentence: its detail and each field error. */
function explain(err: ProblemError): string {
  const fields = (err.errors ?? []).map((e) => e.message).join('; ');
  return fields && fields !== err.detail ? `${err.detail} (${fields})` : err.detail;
}

export function createScheduledTickActivities(deps: ActivityDeps) {
  const { knex, workflows, config } = deps;

  /** A retried tick whose run is recorded: only a pending run may still need its workflow. */
  async function resume(run: RunRow): Promise<TickResult> {
    await ensureRunWorkflow(knex, workflows, run);
    return { runId: run.id, status: run.status };
  }

  return {
    /** Null when no run is due: the schedule is gone or disabled. */
    async startScheduledRun(tick: TickInput): Promise<TickResult | null> {
      const schedule = (await knex('schedules').where({ id: tick.scheduleId }).first()) as ScheduleRow | undefined;
      if (!schedule) {
        await deleteTemporalSchedule(workflows, tick.scheduleId); // a leftover of a deleted row
        return null;
      }
      const runId = tickRunId(tick.tickId);
      const existing = (await knex('runs').where({ id: runId }).first()) as RunRow | undefined;
      if (existing) return resume(existing);
      if (!schedule.enabled) {
        await pauseTemporalSchedule(workflows, schedule.id, schedule.disabled_reason ?? 'Disabled');
        return null;
      }
      // The package row outlives the schedule row (foreign key cascade).
      const pkg = (await knex('packages').where({ id: schedule.package_id }).first()) as PackageRow;
      const launcher = {
        orgId: schedule.org_id,
        spaceId: schedule.space_id,
        input: schedule.input,
        actor: { type: 'schedule' as const, id: schedule.id },
        userId: schedule.created_by,
        scheduleId: schedule.id,
      };
      // A refusal before the run exists records it here as a failed run written finished at
      // once, which admitRun's rate leaves out (a missing connection records none): no refused
      // tick spends a launch.
      const refuse = async (why: string, agent?: ResolvedAgent): Promise<TickResult> => {
        await insertRefusedRun(knex, {
          ...launcher,
          id: runId,
          packageId: pkg.id,
          version: agent?.version ?? (await latestVersion(knex, pkg.id))?.version ?? '',
          timeoutSeconds: effectiveTimeoutSeconds(agent?.timeoutSeconds, config.platformRunLimits.timeout_ceiling_seconds),
          error: `The scheduled run could not start: ${why}`,
        });
        return { runId, status: 'failed' };
      };

      if (!(await creatorCanRun(knex, schedule))) {
        const reason = await lostAccessReason(knex, schedule);
        await disableSchedule(knex, workflows, schedule.id, reason);
        return refuse(reason);
      }
      let agent: ResolvedAgent | undefined;
      try {
        agent = await resolveAgent(knex, schedule.org_id, schedule.space_id, pkg.scope, pkg.name);
        if (!agent) return refuse(`${fullName(pkg)} is no longer available in this space (moved to another space, or no published version)`);
        let input: Record<string, unknown>;
        let files: InputFile[];
        try {
          // A schedule's file inputs are files of its creator's (a kept `file_`: an upload lapses in an hour).
          const where = { orgId: schedule.org_id, spaceId: schedule.space_id, canRead: (row: OwnerColumns) => row.user_id === schedule.created_by };
          ({ input, files } = await resolveInputFiles(knex, where, agent, runInput(agent.inputSchema, schedule.input)));
        } catch (err) {
          if (!(err instanceof ProblemError)) throw err;
          return refuse(`the schedule's input does not match the input schema of ${agent.fullName} ${agent.version}: ${explain(err)}`, agent);
        }
        // A creator without a usable connection: no run, no launch spent, the schedule stays
        // enabled; `run.connection_missing` (its id derived from the tick) says why.
        let connections: Record<string, string>;
        try {
          connections = await requireConnections(knex, config.modules.has('webhooks') ? workflows : null, {
            orgId: schedule.org_id,
            spaceId: schedule.space_id,
            owner: { type: 'user', id: schedule.created_by },
            agent,
            publicUrl: null,
            eventId: deterministicEventId(`${tick.tickId}:run.connection_missing`),
          });
        } catch (err) {
          if (err instanceof ProblemError && err.code === 'connection_missing') return null;
          throw err;
        }
        const run = await admitRun(knex, config.platformRunLimits, { ...launcher, agent, input, files, id: runId, connections });
        await startRunWorkflow(knex, workflows, run, agent);
        return { runId, status: run.status };
      } catch (err) {
        // Limits (org_run_rate_limited, org_run_concurrency_exceeded), unresolvable skills.
        if (err instanceof ProblemError && err.code !== 'service_unavailable') return refuse(explain(err), agent);
        throw err;
      }
    },
  };
}
