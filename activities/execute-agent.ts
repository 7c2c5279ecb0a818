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
import { isTerminal, type RunRow, type RunStatus } from '../shared/runs/model.ts';
import { type CarriedOutput, carryOutput } from '../shared/runs/pending-output.ts';
import type { ActivityDeps } from './deps.ts';
import { loadRunWithAgent } from './load-run.ts';
import { collectOutputFiles, inputFilesOf, prepareRunFiles } from './run-files.ts';
import { createPublishRunEventActivity } from './publish-run-event.ts';
import { endRun, startRun } from './run-state.ts';
import { inSandboxSession } from './sandbox/session.ts';
import { type SandboxMode, sandboxModeFor, sandboxModeHere } from './sandbox/spawn.ts';
import { deleteWorkspaceCheckpoints, openWorkspaceCheckpoints, type WorkspaceCheckpoints } from './sandbox/checkpoints.ts';
import { materializeSkills } from './sandbox/skills.ts';
import { apiIntegrations } from './sidecar/api-call.ts';
import { fileToolsOf } from './sidecar/file-tools.ts';
import { AttemptSuperseded, RunJournal } from './sidecar/journal.ts';
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
  /**
   * The terminal status this attempt wrote and announced (its event published, the workspace's
   * checkpoints deleted): runAgent has nothing left to write (workflows/run-lifecycle.ts).
   */
  ended?: RunStatus;
  /**
   * This attempt wrote the run's start and published `run.started` but sent no `sandboxStarted`
   * signal: its agent was done before the signal was due (ANNOUNCE_SIGNAL_AFTER_ASK_MS), and this
   * result tells runAgent instead, a workflow task fewer.
   */
  announced?: boolean;
}

const KEEP_OUTPUT_TRIES = 3;
/** The latest a run's start is announced after its attempt took a slot, should its runtime ask the model nothing sooner. */
const ANNOUNCE_AT_LATEST_MS = 1000;
/**
 * How long after the agent first asks its model the start's signal waits. An agent done sooner (a
 * local or cached model) ends its run without it: the signal's workflow task would run beside the
 * run's last steps for nothing (docs/performance.md, fourth round). `run.started` is published at
 * the first question all the same.
 */
const ANNOUNCE_SIGNAL_AFTER_ASK_MS = 100;

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

/** Whether the agent can put files in output/ (the write_file tool, or commands of its own). */
function writesFiles(agent: ResolvedAgent): boolean {
  return runsCode(agent) || fileToolsOf(agent).some((tool) => tool.name === 'write_file');
}

function failure(message: string, type = 'AgentFailed'): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, type);
}

/**
 * The end of an attempt that another attempt of the run superseded (journal.ts): a later attempt
 * took the run, or recorded a step first. Temporal ignores it from an attempt it timed out
 * already; should this be the live attempt (a stale one wrote the step before this one took the
 * run), the retry resumes from the journal, that step included.
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
   * Tells runAgent the run holds a slot, so it starts its timeout (and, unless `announced` says
   * this attempt wrote the start and published `run.started`, marks the run `running`). Without
   * it the run would have no timeout until the agent ends: failing it fails the attempt before
   * any sandbox starts (Temporal's client already retries transient errors).
   */
  async function announceStart(runId: string, announced: boolean): Promise<void> {
    try {
      await deps.workflows.workflow.getHandle(runId).signal(sandboxStarted, { announced });
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

  /** The run's event `type` published (idempotent: runAgent publishes it again when this fails); false when it failed. */
  function published(runId: string, type: string): Promise<boolean> {
    return publishRunEvent(runId, type).then(
      () => true,
      (err) => {
        log.warn({ err, runId }, `${type} not published here; runAgent publishes it`);
        return false;
      },
    );
  }

  /**
   * A success is written here, a Temporal round trip sooner than runAgent's finalizeRun could
   * (which then finds it written), unless runAgent may decide otherwise: a cancel asked for
   * (recorded before the workflow hears it; this activity hears it seconds later, with a
   * heartbeat) or its timeout near, both checked by the write itself (run-state.ts, `endRun`).
   * Not written, the output goes to runAgent: inline when small, else by reference. Written (a
   * success, or `failed` when the output does not match its schema) and announced, the status is
   * `ended`: runAgent has nothing left to do.
   */
  async function settleOutput(
    ctx: Context,
    run: RunRow,
    agent: ResolvedAgent,
    startedAt: Date | null,
    output: unknown,
  ): Promise<{ carried?: CarriedOutput; ended?: RunStatus }> {
    const ended = { ...(run as RunRow & { scope: string; name: string }), started_at: startedAt ?? run.started_at };
    const written =
      !ctx.cancellationSignal.aborted &&
      (await endRun(knex, ended, agent, { status: 'success', output }, { uncontested: { attempt: ctx.info.attempt } }).catch((err) => {
        log.warn({ err, runId: run.id }, 'the run could not be ended here; runAgent ends it');
      }));
    if (!written) return { carried: await carryOutputOrRetry(knex, run.id, output) };
    // Its webhooks hear it now, a workflow task sooner than runAgent's own publish, which then
    // finds it sent (activities/webhooks/first-attempt.ts); failing here leaves it to that one.
    if (!(await published(run.id, `run.${written}`))) return {};
    // As finalizeRun would once the status is written: an agent that ran code leaves checkpoints
    // (the file sweep deletes those a failure here leaves behind).
    if (runsCode(agent)) {
      await deleteWorkspaceCheckpoints(deps.files, run.id).catch((err) =>
        log.warn({ err, runId: run.id }, 'workspace checkpoints not deleted: the file sweep will'),
      );
    }
    return { ended: written };
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
      RunJournal.load(knex, runId, attempt, config.runCheckpoints).catch((err) => {
        throw err instanceof AttemptSuperseded ? superseded(attempt) : err;
      }),
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
    // in case an earlier one was lost before it could), written before the agent's first step
    // (the sidecar's steps wait for it) but without holding the sandbox back. Then the start is
    // announced: `run.started` published (every attempt again: the event is stored once) and the
    // signal on which runAgent starts its timeout. That happens once the agent first asks its
    // model, while this worker waits for the answer, not while the runtime starts: that work held
    // the worker's thread as the runtime's first requests came in (docs/performance.md); the
    // signal ANNOUNCE_SIGNAL_AFTER_ASK_MS later, and not at all when the agent is done sooner (the
    // result says so instead). A runtime that asks nothing within ANNOUNCE_AT_LATEST_MS, or an
    // attempt that ends sooner, is announced then. Should the signal fail, the sandbox is stopped
    // and the attempt fails with it.
    let announceFailed: ApplicationFailure | undefined;
    const marked = startRun(knex, runId, sandboxMode);
    marked.catch(() => undefined); // awaited below; a failure before then is not unhandled
    const publishNow = Promise.withResolvers<void>();
    const signalNow = Promise.withResolvers<void>();
    let signalDue = false;
    const signal = () => {
      signalDue = true;
      signalNow.resolve();
    };
    /** The signal is not sent: the attempt's result announces the start (`announced`) when it was published. */
    let byResult = false;
    let startPublished = false;
    const latest = setTimeout(signal, ANNOUNCE_AT_LATEST_MS);
    const announced = Promise.all([marked, Promise.race([publishNow.promise, signalNow.promise])])
      .then(([started]) => started)
      .then(
        (started) => started !== null && published(runId, 'run.started'),
        () => false,
      )
      .then(async (done) => {
        startPublished = done;
        await signalNow.promise;
        if (!byResult) await announceStart(runId, done);
      })
      .then(
        () => undefined,
        (err: ApplicationFailure) => {
          announceFailed = err;
        },
      );
    const announceWhenDone = () => {
      clearTimeout(latest);
      signal();
    };
    const attemptDone = beginAttempt(knex, runId, attempt, config, journal).then(() =>
      // What is opened for the run is released by its session, however the attempt ends.
      inSandboxSession({ kind: 'run', name: run.id, logFields: { runId }, ctx }, deps, async (session) => {
        // MCP server dependencies: connected here, credentials injected in the worker (mcp-tools.ts).
        const mcp = await McpTools.open(run, agent.mcpServers, { knex, log, config, signal: session.cancellation });
        session.defer(() => mcp.close());
        session.throwIfCancelled();
        // The model's calls: directly, or through its (or the organization's default) proxy; the
        // instance default model is the operator's own, its host may be internal.
        const dispatcher = await session.untilCancelled(
          modelDispatcher(config, model).catch((err: Error) => {
            throw failure(`The model cannot be called: ${err.message}`);
          }),
          (late) => late.close(),
        );
        session.defer(() => dispatcher.close());
        // A warm sandbox when one waits: its mounts are this run's folders from here on.
        const layout = { code, diskMb: config.platformRunLimits.agent_disk_ceiling_mb };
        const workspace = await session.untilCancelled(
          prepareRunFiles(deps.files, run, inputFiles, config.fileMaxBytes, session.warmFolder({ code }), layout).catch((err: Error) => {
            throw failure(`The run's input files could not be prepared: ${err.message}`);
          }),
          (late) => late.remove(),
        );
        session.defer(() => workspace.remove());
        if (code && workspace.skillsDir) {
          await session.untilCancelled(
            materializeSkills(workspace.skillsDir, skills).catch((err: Error) => {
              throw failure(`The agent's skills could not be put in its workspace: ${err.message}`);
            }),
          );
        }
        // Its workspace survives the worker (sandbox/checkpoints.ts): restored here on a resume, before
        // the replay (the session heartbeats meanwhile: a large checkpoint may outlast the timeout).
        let checkpoints: WorkspaceCheckpoints | undefined;
        if (code && workspace.workspaceDir && config.runCheckpoints) {
          checkpoints = await session.untilCancelled(
            openWorkspaceCheckpoints(knex, { storage: deps.files, runId, dir: workspace.workspaceDir, attempt, ceilingMb: layout.diskMb }, journal).catch(
              (err: Error) => {
                throw failure(`The run's workspace could not be restored from its checkpoint: ${err.message}`);
              },
            ),
          );
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
            started: marked,
          },
        );
        // Commands stop at the run's timeout, counted from the start `startRun` writes; the sandbox
        // does not wait for that write (about a commit's fsync): until it is known, from now.
        const deadline = (from: Date) => sidecar.setDeadline(from.getTime() + run.timeout_seconds * 1000);
        deadline(run.started_at ?? new Date());
        await session.start(sidecar, workspace);
        // A failed write fails the attempt here, its sandbox stopped with the session.
        const startedAt = await marked;
        if (startedAt) deadline(startedAt);
        const stopIfUnannounced = announced.then(() => announceFailed && session.stop());
        const supervised = session.supervise({
          progress: () => ({ modelCalls: sidecar.state.modelCalls }),
          // A draining worker records the handover (it is not a loss) before it stops the sandbox.
          onDrain: () =>
            knex('runs')
              .where({ id: runId })
              .update({ handovers: knex.raw('array_append(handovers, ?)', [attempt]) }),
        });
        supervised.catch(() => undefined); // awaited below
        // The run's start is announced as the agent first asks its model (the signal a little
        // later), or once its sandbox ended.
        sidecar.asked.then(() => {
          publishNow.resolve();
          setTimeout(signal, ANNOUNCE_SIGNAL_AFTER_ASK_MS).unref();
        });
        supervised.then(signal, signal);
        // An agent that cannot write files has given all it will once its output was the last call
        // of the model's answer: its run ends now, while its sandbox exits (about 5 ms of teardown).
        let settled: Awaited<ReturnType<typeof settleOutput>> | undefined;
        if (!writesFiles(agent) && (await Promise.race([sidecar.finished.then(() => true), supervised.then(() => false)]))) {
          // Done before the signal was due: the result announces the start.
          if (!signalDue) byResult = true;
          signal();
          await stopIfUnannounced;
          const output = sidecar.state.output;
          if (output && !announceFailed && !sidecar.state.superseded) settled = await settleOutput(ctx, run, agent, startedAt, output.value);
          session.topUp();
        }
        const end = await supervised;
        await stopIfUnannounced;
        // Cancelled, perhaps as a stale attempt (its heartbeat answered "not found" once Temporal
        // gave the run to another): one that no longer holds the run keeps no output files either.
        if (ctx.cancellationSignal.aborted && !sidecar.state.superseded && !(await journal.holdsRun())) sidecar.state.superseded = true;
        // Superseded: the run is the live attempt's, this one writes nothing more to it.
        if (sidecar.state.superseded) return { sidecar, end, settled: undefined };
        if (announceFailed) throw announceFailed;
        // A run handed over or retried writes its files again on the next worker (its runtime replays the calls).
        if (!end.drained && !sidecar.state.retry) await keepOutputFiles(run, workspace.outputDir);
        const output = sidecar.state.output;
        if (output && !settled) settled = await settleOutput(ctx, run, agent, startedAt, output.value);
        session.topUp();
        return { sidecar, end, settled };
      }),
    );
    attemptDone.then(announceWhenDone, announceWhenDone);
    const { sidecar, end, settled } = await attemptDone;
    // Judged once all is released: closing the sidecar ends a model call in flight, whose failure
    // may be the reason the run gives.
    if (sidecar.state.superseded) throw superseded(attempt);
    // Counted as a loss (a storage that stays down fails the run after RUN_MAX_WORKER_LOSSES).
    if (sidecar.state.retry) throw ApplicationFailure.retryable(sidecar.state.retry, 'WorkspaceNotCheckpointed');
    if (sidecar.state.output) {
      const announcedHere = byResult && startPublished ? { announced: true } : {};
      return { ...settled?.carried, ...(settled?.ended ? { ended: settled.ended } : {}), ...announcedHere, sandboxMode: end.mode };
    }
    end.throwIfStopped();
    throw failure(sidecar.state.fatalError ?? end.exitReason('producing an output'));
  }
}
