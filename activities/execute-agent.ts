// executeAgent: starts the sidecar and the sandboxed runtime for one run, heartbeats while it
// works, kills it when the workflow cancels (timeout or cancel), and reports the output or a
// readable reason. Retried only when a worker is lost or hands the run over (DESIGN.md section
// 8): the new attempt's runtime goes on from the run's journal, so nothing completed is redone.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { modelDispatcher } from '../shared/models/outbound.ts';
import { resolveModel } from '../shared/models/resolve.ts';
import { withRunId } from '../shared/observability/context.ts';
import { HEARTBEAT_TIMEOUT_SECONDS, SANDBOX_STARTED_SIGNAL } from '../shared/runs/attempts.ts';
import { appendRunLog } from '../shared/runs/logs.ts';
import type { RunRow } from '../shared/runs/model.ts';
import type { ActivityDeps } from './deps.ts';
import { loadRunWithAgent } from './load-run.ts';
import { collectOutputFiles, inputFilesOf, prepareRunFiles, type RunWorkspace } from './run-files.ts';
import { RUNTIME_ENTRY, type SandboxExit, type SandboxMode, sandboxExitReason, spawnSandbox } from './sandbox/spawn.ts';
import { type Supervised, superviseSandbox } from './sandbox/supervise.ts';
import { apiIntegrations } from './sidecar/api-call.ts';
import { RunJournal } from './sidecar/journal.ts';
import { McpTools } from './sidecar/mcp-tools.ts';
import { Sidecar } from './sidecar/server.ts';

export interface ExecuteResult {
  output: unknown;
  sandboxMode: SandboxMode;
}


/** Memory (notes, pins) belongs to the agent and the actor a run executes for. */
export function actorKey(run: RunRow): string {
  if (run.end_user_id) return `end_user:${run.end_user_id}`;
  if (run.actor_type === 'api_key') return `api_key:${run.actor_id}`;
  return `user:${run.user_id ?? run.actor_id}`;
}

function failure(message: string, type = 'AgentFailed'): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, type);
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
      `The worker running this agent stopped responding (no heartbeat for ${HEARTBEAT_TIMEOUT_SECONDS} s) and checkpoints are off (RUN_CHECKPOINTS=false), so the run cannot resume`,
      'WorkerLost',
    );
  }
  if (losses >= config.runMaxWorkerLosses) {
    throw failure(
      `The run lost its worker ${losses} times (each stopped responding for ${HEARTBEAT_TIMEOUT_SECONDS} s before the run finished); RUN_MAX_WORKER_LOSSES is ${config.runMaxWorkerLosses}`,
      'WorkerLost',
    );
  }
  const why = handovers.includes(attempt - 1) ? 'after its worker shut down' : 'after a worker loss';
  const steps = journal.recorded;
  await appendRunLog(knex, runId, {
    level: 'warn',
    type: 'resume',
    message: `The run resumed on another worker ${why} (attempt ${attempt}): ${steps} completed step${steps === 1 ? ' is' : 's are'} replayed from its checkpoint, not repeated`,
  });
}

function exitReason(exit: SandboxExit, memoryMb: number, sidecar: Sidecar): string {
  return sidecar.state.fatalError ?? sandboxExitReason(exit, memoryMb, 'producing an output');
}

export function createExecuteAgentActivity(deps: ActivityDeps) {
  const { knex, config, log } = deps;
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
      await deps.workflows.workflow.getHandle(runId).signal(SANDBOX_STARTED_SIGNAL);
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

  async function execute(runId: string): Promise<ExecuteResult> {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    const loaded = await loadRunWithAgent(knex, runId);
    if (!loaded) throw failure('The run was deleted before it started');
    const { run, agent } = loaded;
    if (!agent) throw failure(`Version ${run.package_version} of the agent is no longer available`);
    const model = await resolveModel(knex, config, run.org_id);
    if (!model) {
      throw failure('No model is configured: add one with POST /api/models (isDefault: true) or set MODEL_BASE_URL and MODEL_NAME', 'NoModel');
    }
    // This attempt holds a worker slot: the run is `running` from now on (runAgent waits for this;
    // every attempt says so, in case an earlier one was lost before it could). Sent alongside the
    // preparation below, and awaited before the sandbox starts.
    const announced = announceStart(runId);
    announced.catch(() => undefined); // awaited below; a failure before then is not unhandled
    const journal = await RunJournal.load(knex, runId, attempt, config.runCheckpoints);
    await beginAttempt(knex, runId, attempt, config, journal);
    const pins = (
      await knex('agent_memory').where({ package_id: agent.packageId, actor_key: actorKey(run), kind: 'pin' }).orderBy('id').limit(50).select('content')
    ).map((r) => r.content as string);
    // Integrations the model may call through `api_call`; their connections are loaded and
    // decrypted in the sidecar, per call, and never reach the sandbox.
    const apis = await apiIntegrations(knex, run, agent);
    // MCP server dependencies: connected here, credentials injected in the worker (mcp-tools.ts).
    const mcp = await McpTools.open(run, agent.mcpServers, { knex, log, config });
    // The model's calls: directly, or through its (or the organization's default) proxy; the
    // instance default model is the operator's own, its host may be internal. Opened last of
    // what the failures below close.
    const dispatcher = await modelDispatcher(config, model).catch(async (err: Error) => {
      await mcp.close();
      throw failure(`The model cannot be called: ${err.message}`);
    });
    let workspace: RunWorkspace;
    try {
      workspace = await prepareRunFiles(deps.files, run, await inputFilesOf(knex, run.id), config.fileMaxBytes);
    } catch (err) {
      await mcp.close();
      await dispatcher.close();
      throw failure(`The run's input files could not be prepared: ${(err as Error).message}`);
    }
    const sidecar = new Sidecar(
      { run, agent, model, pins, actorKey: actorKey(run), apiIntegrations: apis, files: workspace.info },
      { knex, log, journal, dispatcher, maxRequestBytes: config.llmProxyLimits.max_request_bytes, mcp, delivery: config, tracer: deps.tracer },
    );
    const limits = config.platformRunLimits;
    let sandbox: ReturnType<typeof spawnSandbox>;
    try {
      await announced;
      await sidecar.listen();
      sandbox = spawnSandbox({
        name: run.id,
        nodeArgs: [RUNTIME_ENTRY],
        socketDir: sidecar.socketDir,
        files: workspace,
        memoryMb: limits.agent_memory_ceiling_mb,
        cpus: limits.agent_cpu_ceiling,
      });
    } catch (err) {
      // Nothing runs yet: release what was opened for the run (MCP clients, sockets).
      await sidecar.close().catch(() => undefined);
      await mcp.close();
      await dispatcher.close();
      await workspace.remove();
      throw err;
    }
    if (sandbox.mode === 'process') log.warn({ runId }, 'bwrap is missing: the agent runs WITHOUT isolation (process mode)');
    await knex('runs').where({ id: runId }).update({ sandbox_mode: sandbox.mode });
    let supervised: Supervised;
    try {
      supervised = await superviseSandbox(sandbox, {
        ctx,
        draining: deps.draining,
        progress: () => ({ modelCalls: sidecar.state.modelCalls }),
        // A draining worker records the handover (it is not a loss) before it stops the sandbox.
        onDrain: () => knex('runs').where({ id: runId }).update({ handovers: knex.raw('array_append(handovers, ?)', [attempt]) }),
      });
      // A handed-over run writes its files again on the next worker (its runtime replays the calls).
      if (!supervised.drained) await keepOutputFiles(run, workspace.outputDir);
    } finally {
      await sidecar.close();
      await mcp.close();
      await dispatcher.close();
      await workspace.remove();
    }
    if (sidecar.state.output) return { output: sidecar.state.output.value, sandboxMode: sandbox.mode };
    if (ctx.cancellationSignal.aborted) throw new CancelledFailure('The sandbox was stopped');
    if (supervised.drained) throw ApplicationFailure.retryable('The worker is shutting down: the run is handed over to another worker', 'WorkerDrain');
    throw failure(exitReason(supervised.exit, limits.agent_memory_ceiling_mb, sidecar));
  }
}
