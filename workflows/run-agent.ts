// runAgent (DESIGN.md sections 2 and 8): executeAgent is scheduled on the sandbox queue and the
// run stays `pending` until a worker slot takes it (its `sandboxStarted` signal); then
// markRunRunning, and executeAgent raced against a durable timer of the clamped timeout ->
// finalizeRun in a non-cancellable scope. executeAgent usually writes both itself and says so (the
// signal's `announced`, or its result's for an agent done before the signal was due; its result's
// `ended`): then runAgent only sets RunStatus
// (run-lifecycle.ts). Cancelling the workflow cancels the run, waiting or not; a lost worker shows
// up as a missed heartbeat, and the retried attempt resumes the run from its journal on another
// worker (shared/runs/attempts.ts).
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  patched,
  setHandler,
  proxyActivities,
  sleep,
  TimeoutFailure,
  ActivityCancellationType,
} from '@temporalio/workflow';
import type { createExecuteAgentActivity } from '../activities/execute-agent.ts';
import type { RunOutcome } from '../activities/run-state.ts';
import type { RunStatus } from '../shared/runs/model.ts';
import { EXECUTE_AGENT_RETRY, HEARTBEAT_TIMEOUT_SECONDS } from '../shared/runs/attempts.ts';
import { AGENT_SANDBOX_TASK_QUEUE } from '../temporal/contract/queues.ts';
import { sandboxStarted } from '../temporal/contract/runs.ts';
import type { RunAgentInput } from '../temporal/contract/workflows.ts';
import { finalize, markStarted } from './run-lifecycle.ts';

type ExecActivities = ReturnType<typeof createExecuteAgentActivity>;

function describe(err: unknown): string {
  if (err instanceof ActivityFailure) {
    if (err.cause instanceof TimeoutFailure) {
      return `The worker running this agent stopped responding (no heartbeat for ${HEARTBEAT_TIMEOUT_SECONDS} s); the watchdog stopped the run`;
    }
    if (err.cause instanceof ApplicationFailure) return err.cause.message;
    return err.cause?.message ?? err.message;
  }
  return (err as Error).message ?? String(err);
}

/** Runs begun before worker run slots replay as they ran: `running` at once, executeAgent on `agent-runs`. */
const SANDBOX_SLOTS_PATCH = 'sandbox-slots';

export async function runAgent(input: RunAgentInput): Promise<string> {
  const slots = patched(SANDBOX_SLOTS_PATCH);
  let started = false;
  let announced = false;
  setHandler(sandboxStarted, (start) => {
    started = true;
    announced ||= start?.announced === true;
  });
  const exec = proxyActivities<ExecActivities>({
    ...(slots ? { taskQueue: AGENT_SANDBOX_TASK_QUEUE, ...(input.orgId ? { priority: { fairnessKey: input.orgId } } : {}) } : {}),
    startToCloseTimeout: `${input.timeoutSeconds + 120} seconds`,
    heartbeatTimeout: `${HEARTBEAT_TIMEOUT_SECONDS} seconds`,
    retry: EXECUTE_AGENT_RETRY,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });

  let outcome: RunOutcome;
  let ended: RunStatus | undefined;
  let result: Promise<unknown> | undefined;
  try {
    if (!slots) await markStarted(input.runId);
    const execution = new CancellationScope();
    const running = execution.run(() => exec.executeAgent(input.runId));
    result = running;
    if (slots) {
      // Pending until a slot takes the run (or until the attempt ends, when it fails before saying so).
      let settled = false;
      const settle = () => {
        settled = true;
      };
      // An attempt done before its signal was due announces the start with its result instead.
      running.then((r) => {
        announced ||= r.announced === true;
        settle();
      }, settle);
      await condition(() => started || settled);
      await markStarted(input.runId, announced);
    }
    const winner = await Promise.race([
      running.then((r) => ({ kind: 'done' as const, output: r.output, outputRef: r.outputRef, ended: r.ended })),
      sleep(input.timeoutSeconds * 1000).then(() => ({ kind: 'timeout' as const })),
    ]);
    if (winner.kind === 'timeout') {
      execution.cancel();
      await running.catch(() => undefined); // the sandbox is dead before we finalize
      outcome = { status: 'timeout', error: `The run exceeded its timeout of ${input.timeoutSeconds} s` };
    } else {
      outcome = { status: 'success', output: winner.output, outputRef: winner.outputRef };
      ended = winner.ended;
    }
  } catch (err) {
    // On cancel the activity is cancelled too; wait until it has killed the sandbox.
    await result?.catch(() => undefined);
    outcome = isCancellation(err) ? { status: 'cancelled', error: 'The run was cancelled' } : { status: 'failed', error: describe(err) };
  }
  return finalize(input.runId, outcome, ended);
}
