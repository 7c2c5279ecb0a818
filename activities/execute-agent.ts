// executeAgent: starts the sidecar and the sandboxed runtime for one run, heartbeats while it
// works, kills it when the workflow cancels (timeout or cancel), and reports the output or a
// readable reason. Retried only when a worker is lost or hands the run over (DESIGN.md section
// 8): the new attempt's runtime goes on from the run's journal, so nothing completed is redone.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { modelDispatcher } from '../shared/models/outbound.ts';
import { NO_MODEL_CONFIGURED, resolveModel } from '../shared/models/resolve.ts';
import { withRunId } from '../shared/observability/context.ts';
import { skillFiles } from '../shared/packages/store.ts';
import type { ResolvedAgent } from '../shared/packages/resolve-agent.ts';
import { HEARTBEAT_TIMEOUT_SECONDS } from '../shared/runs/attempts.ts';
import { sandboxStarted } from '../temporal/contract/runs.ts';
import { appendRunLog } from '../shared/runs/logs.ts';
import { actorKey, loadPins } from '../shared/runs/memory.ts';
import { isTerminal, type RunRow } from '../shared/runs/model.ts';
import { type CarriedOutput, carryOutput } from '../shared/runs/pending-output.ts';
import type { ActivityDeps } from './deps.ts';
import { loadRunWithAgent } from './load-run.ts';
import { collectOutputFiles, inputFilesOf, prepareRunFiles } from './run-files.ts';
import { createPublishRunEventActivity } from './publish-run-event.ts';
import { endRun, startRun } from './run-state.ts';
import { inSandboxSession } from './sandbox/session.ts';
import { type SandboxMode, sandboxModeFor, sandboxModeHere } from './sandbox/spawn.ts';
import { openWorkspaceCheckpoints, type WorkspaceCheckpoints } from './sandbox/checkpoints.ts';
import { materializeSkills } from './sandbox/skills.ts';
import { apiIntegrations } from './sidecar/api-call.ts';
import { RunJournal } from './sidecar/journal.ts';
import { McpTools } from './sidecar/mcp-tools.ts';
import { Sidecar } from './sidecar/server.ts';
import { runsCode } from './sidecar/workspace-tools.ts';

/**
 * An attempt that ended with an output: none when the attempt wrote the run's success itself,
 * else the output for runAgent to judge, or the reference of the row keeping a large one
 * (shared/runs/pending-output.ts).
 */
export interface ExecuteResult {
  output?: unknown;
  outputRef?: string;
  sandboxMode: SandboxMode;
}

const KEEP_OUTPUT_TRIES = 3;

/**
 * The output as it travels to runAgent (inline or kept), tried a few times: should the database
 * stay out of reach, the attempt is retried and its runtime replays its calls from the journal.
 */
async function carryOutputOrRetry(knex: Knex, runId: string, output: unknown): Promise<CarriedOutput | undefined> {
  for (let tried = 1; ; tried++) {
    try {
      return await carryOutput(knex, runId, output);
    } catch (err) {
      if (tried >= KEEP_OUTPUT_TRIES) throw ApplicationFailure.retryable(`The agent's output could not be kept: ${(err as Error).message}`, 'OutputNotKept');
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** tried));
    }
  }
}

function failure(message: string, type = 'AgentFailed'): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, type);
}

/**
 * The end of an attempt that another attempt of the run superseded (journal.ts): Temporal ignores
 * it from an attempt it timed out already; should this be the live attempt (the stale one
 * recorded the step first), the retry resumes from the journal, that step included.
 */
function superseded(attempt: number): ApplicationFailure {
  return ApplicationFailure.retryable(`Attempt ${attempt} was superseded by another attempt of the run`, 'AttemptSuperseded');
}

/**
 * Before a retried attempt: fails the run once it has lost RUN_MAX_WORKER_LOSSES workers (or
 * when there is no checkpoint to resume from), else logs the resume once.
 */
async function beginAttempt(knex: Knex, runId: string, attempt: number, config: ActivityDeps['config'], journal: RunJournal): Promise<void> {
  if (attempt === 1) return;
  const { handovers } = (await knex('runs').where({ id: runId }).first('handovers')) as { handovers: number[] };
  const losses = attempt - 1 - handovers.length;
  if (!config.runCheckpoints) {
    throw failure(
      `The worker running this agent stopped responding (no heartbeat for ${HEARTBEAT_TIMEOUT_SECONDS} s) and checkpoints are off ` +
        `(RUN_CHECKPOINTS=false), so the run cannot resume`,
      'WorkerLost',
    );
  }
  if (losses >= config.runMaxWorkerLosses) {
    throw failure(
      `The run lost its worker ${losses} times (each stopped responding for ${HEARTBEAT_TIMEOUT_SECONDS} s before the run finished); ` +
        `RUN_MAX_WORKER_LOSSES is ${config.runMaxWorkerLosses}`,
      'WorkerLost',
    );
  }
  const why = handovers.includes(attempt - 1) ? 'after its worker shut down' : 'after a worker loss';
  const steps = journal.recorded;
  await appendRunLog(knex, runId, {
    level: 'warn',
    type: 'resume',
    message:
      `The run resumed on another worker ${why} (attempt ${attempt}): ${steps} completed step${steps === 1 ? ' is' : 's are'} replayed ` +
      `from its checkpoint, not repeated`,
  });
}

export function createExecuteAgentActivity(deps: ActivityDeps) {
  const { knex, config, log } = deps;
  const { publishRunEvent } = createPublishRunEventActivity(deps);
  return {
    async executeAgent(runId: string): Promise<ExecuteResult> {
      try {
        // Every log line of the attempt carries the run id, traced or not.
        return await withRunId(runId, () => execute(runId));
      } catch (err) {
        // Only lost workers and handovers are retried: anything else ends the run with its reason.
        if (err instanceof ApplicationFailure || err instanceof CancelledFailure) throw err;
        throw failure((err as Error).message);
      }
    },
  };

  /**
   * Tells runAgent the run holds a slot, so it marks the run `running` and starts its timeout.
   * Without it the run would have no timeout until the agent ends: failing it fails the attempt
   * before any sandbox starts (Temporal's client already retries transient errors).
   */
  async function announceStart(runId: string): Promise<void> {
    try {
      await deps.workflows.workflow.getHandle(runId).signal(sandboxStarted);
    } catch (err) {
      throw failure(`The run could not be marked as started: ${(err as Error).message}`);
    }
  }

  /** What the agent wrote becomes files of the run; a storage failure is logged, the run's result stands. */
  async function keepOutputFiles(run: RunRow, outputDir: string): Promise<void> {
    try {
      await collectOutputFiles({ knex, storage: deps.files, maxBytes: config.fileMaxBytes, quotaBytes: config.orgStorageQuotaBytes }, run, outputDir);
    } catch (err) {
      log.error({ err, runId: run.id }, 'output files not kept');
      await appendRunLog(knex, run.id, { level: 'error', type: 'files', message: `The run's output files could not be kept: ${(err as Error).message}` });
    }
  }

  /**
   * A success is written here, a Temporal round trip sooner than runAgent's finalizeRun could
   * (which then finds it written), unless runAgent may decide otherwise: a cancel asked for
   * (recorded before the workflow hears it; this activity hears it seconds later, with a
   * heartbeat) or its timeout near, both checked by the write itself (run-state.ts, `endRun`).
   * Not written, the output goes to runAgent: inline when small, else by reference.
   */
  async function settleOutput(ctx: Context, run: RunRow, agent: ResolvedAgent, startedAt: Date | null, output: unknown): Promise<CarriedOutput | undefined> {
    const ended = { ...(run as RunRow & { scope: string; name: string }), started_at: startedAt ?? run.started_at };
    const written =
      !ctx.cancellationSignal.aborted &&
      (await endRun(knex, ended, agent, { status: 'success', output }, { uncontested: true }).catch((err) => {
        log.warn({ err, runId: run.id }, 'the run could not be ended here; runAgent ends it');
      }));
    if (!written) return carryOutputOrRetry(knex, run.id, output);
    // Its webhooks hear it now, a workflow task sooner than runAgent's own publish, which then
    // finds it sent (activities/webhooks/first-attempt.ts); failing here leaves it to that one.
    // The status written: an output its schema refuses ends the run failed, not success.
    await publishRunEvent(run.id, `run.${written}`).catch((err) => log.warn({ err, runId: run.id }, 'run event not published here; runAgent publishes it'));
  }

  async function execute(runId: string): Promise<ExecuteResult> {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    const loaded = await loadRunWithAgent(knex, runId);
    if (!loaded) throw failure('The run was deleted before it started');
    const { run, agent } = loaded;
    // An earlier attempt ended the run itself (it succeeded, and its worker was lost before Temporal heard).
    if (run.status === 'success') return { sandboxMode: (run.sandbox_mode ?? sandboxModeHere()) as SandboxMode };
    if (isTerminal(run.status)) throw failure(`The run already ended ${run.status}`);
    if (!agent) throw failure(`Version ${run.package_version} of the agent is no longer available`);
    const memoryKey = actorKey(run);
    // An agent that runs code gets its whole workspace, its skills' files in it (DESIGN.md 9).
    const code = runsCode(agent);
    // What the run needs, read at once: reads only, nothing to release when one fails.
    const [model, journal, pins, apis, inputFiles, skills] = await Promise.all([
      resolveModel(knex, config, run.org_id),
      RunJournal.load(knex, runId, attempt, config.runCheckpoints),
      loadPins(knex, agent.packageId, memoryKey),
      // Integrations the model may call through `api_call`; their connections are loaded and
      // decrypted in the sidecar, per call, and never reach the sandbox.
      apiIntegrations(knex, run, agent),
      inputFilesOf(knex, run.id),
      code ? skillFiles(knex, run.org_id, agent.skills) : [],
    ]);
    if (!model) throw failure(NO_MODEL_CONFIGURED, 'NoModel');
    // Refused here, before the run is marked running, when no sandbox may start for this agent
    // (no bwrap; or commands of its own without cgroup ceilings, SANDBOX_LIMITS).
    const sandboxMode = sandboxModeFor(agent.runtimeTools, config.sandboxLimits);
    // This attempt holds a worker slot: the run is `running` from now on (every attempt says so,
    // in case an earlier one was lost before it could; written before the sandbox goes), and
    // runAgent starts its timeout on the signal, which need not hold the sandbox back: should it
    // fail, the sandbox is stopped and the attempt fails with it.
    let announceFailed: ApplicationFailure | undefined;
    const announced = announceStart(runId).then(
      () => undefined,
      (err: ApplicationFailure) => {
        announceFailed = err;
      },
    );
    const marked = startRun(knex, runId, sandboxMode);
    marked.catch(() => undefined); // awaited below; a failure before then is not unhandled
    await beginAttempt(knex, runId, attempt, config, journal);
    // What is opened for the run is released by its session, however the attempt ends.
    const { sidecar, end, carried } = await inSandboxSession({ kind: 'run', name: run.id, logFields: { runId }, ctx }, deps, async (session) => {
      // MCP server dependencies: connected here, credentials injected in the worker (mcp-tools.ts).
      const mcp = await McpTools.open(run, agent.mcpServers, { knex, log, config });
      session.defer(() => mcp.close());
      // The model's calls: directly, or through its (or the organization's default) proxy; the
      // instance default model is the operator's own, its host may be internal.
      const dispatcher = await modelDispatcher(config, model).catch((err: Error) => {
        throw failure(`The model cannot be called: ${err.message}`);
      });
      session.defer(() => dispatcher.close());
      // A warm sandbox when one waits: its mounts are this run's folders from here on.
      const layout = { code, diskMb: config.platformRunLimits.agent_disk_ceiling_mb };
      const workspace = await prepareRunFiles(deps.files, run, inputFiles, config.fileMaxBytes, session.warmFolder({ code }), layout).catch((err: Error) => {
        throw failure(`The run's input files could not be prepared: ${err.message}`);
      });
      session.defer(() => workspace.remove());
      if (code && workspace.skillsDir) {
        await materializeSkills(workspace.skillsDir, skills).catch((err: Error) => {
          throw failure(`The agent's skills could not be put in its workspace: ${err.message}`);
        });
      }
      // Its workspace survives the worker (sandbox/checkpoints.ts): restored here on a resume, before
      // the replay, heartbeating meanwhile (a large checkpoint may outlast the heartbeat timeout).
      let checkpoints: WorkspaceCheckpoints | undefined;
      if (code && workspace.workspaceDir && config.runCheckpoints) {
        const beat = setInterval(() => ctx.heartbeat({ modelCalls: 0 }), 2000);
        checkpoints = await openWorkspaceCheckpoints(
          knex,
          { storage: deps.files, runId, dir: workspace.workspaceDir, attempt, ceilingMb: layout.diskMb },
          journal,
        )
          .catch((err: Error) => {
            throw failure(`The run's workspace could not be restored from its checkpoint: ${err.message}`);
          })
          .finally(() => clearInterval(beat));
      }
      const sidecar = new Sidecar(
        { run, agent, model, pins, actorKey: memoryKey, apiIntegrations: apis, files: workspace.info },
        {
          knex,
          log,
          journal,
          dispatcher,
          maxRequestBytes: config.llmProxyLimits.max_request_bytes,
          mcp,
          delivery: config,
          tracer: deps.tracer,
          checkpoints,
          stopSandbox: () => session.stop(),
        },
      );
      const startedAt = await marked;
      sidecar.setDeadline((startedAt ?? new Date()).getTime() + run.timeout_seconds * 1000);
      await session.start(sidecar, workspace);
      const stopIfUnannounced = announced.then(() => announceFailed && session.stop());
      const end = await session.supervise({
        progress: () => ({ modelCalls: sidecar.state.modelCalls }),
        // A draining worker records the handover (it is not a loss) before it stops the sandbox.
        onDrain: () =>
          knex('runs')
            .where({ id: runId })
            .update({ handovers: knex.raw('array_append(handovers, ?)', [attempt]) }),
      });
      await stopIfUnannounced;
      // Superseded: the run is the live attempt's, this one writes nothing more to it.
      if (sidecar.state.superseded) return { sidecar, end, carried: undefined };
      if (announceFailed) throw announceFailed;
      // A run handed over or retried writes its files again on the next worker (its runtime replays the calls).
      if (!end.drained && !sidecar.state.retry) await keepOutputFiles(run, workspace.outputDir);
      const output = sidecar.state.output;
      const carried = output ? await settleOutput(ctx, run, agent, startedAt, output.value) : undefined;
      return { sidecar, end, carried };
    });
    // Judged once all is released: closing the sidecar ends a model call in flight, whose failure
    // may be the reason the run gives.
    if (sidecar.state.superseded) throw superseded(attempt);
    // Counted as a loss (a storage that stays down fails the run after RUN_MAX_WORKER_LOSSES).
    if (sidecar.state.retry) throw ApplicationFailure.retryable(sidecar.state.retry, 'WorkspaceNotCheckpointed');
    if (sidecar.state.output) return { ...carried, sandboxMode: end.mode };
    end.throwIfStopped();
    throw failure(sidecar.state.fatalError ?? end.exitReason('producing an output'));
  }
}
