// remoteRun: the durable side of a run executed outside the service. The runner reports through
// the run's sink; this workflow owns the run's state and two deadlines: the sink's expiry (moved
// by extendSink) and the run's clamped timeout from its creation. A sink that expires without a
// final report fails the run (the runner stopped reporting, as the watchdog does for a lost
// worker); the timeout ends it `timeout`; cancelling the workflow cancels the run.
import { ApplicationFailure, allHandlersFinished, condition, isCancellation, setHandler } from '@temporalio/workflow';
import type { RunOutcome } from '../activities/run-state.ts';
import { extendSink, finishRemoteRun, RUN_FINISHED, SINK_EXPIRED, SINK_EXPIRED_ERROR, startRemoteRun } from '../temporal/contract/runs.ts';
import type { RemoteRunInput } from '../temporal/contract/workflows.ts';
import { finalize, markStarted } from './run-lifecycle.ts';

export async function remoteRun(input: RemoteRunInput): Promise<string> {
  const timeoutAt = Date.now() + input.timeoutSeconds * 1000;
  let sinkExpiresAt = Date.parse(input.sinkExpiresAt);
  let decided: RunOutcome | undefined; // once set, the sink takes nothing more
  let expired = false; // the sink's expiry decided
  let final: string | undefined;
  let started: Promise<boolean> | undefined;
  const start = () => (started ??= markStarted(input.runId));
  // Past its expiry the sink is closed even before the timer below has fired.
  const refuseWhenDecided = (..._args: unknown[]) => {
    if (expired || (!decided && Date.now() >= sinkExpiresAt)) {
      throw ApplicationFailure.create({ type: SINK_EXPIRED, message: `The sink expired at ${new Date(sinkExpiresAt).toISOString()}`, nonRetryable: true });
    }
    if (decided) throw ApplicationFailure.create({ type: RUN_FINISHED, message: 'The run has ended; its sink accepts nothing more', nonRetryable: true });
  };

  setHandler(
    startRemoteRun,
    async () => {
      await start();
      return 'running';
    },
    { validator: refuseWhenDecided },
  );
  setHandler(
    extendSink,
    (seconds: number) => {
      // Extensions only push back: concurrent ones leave the latest expiry, whatever their order.
      sinkExpiresAt = Math.max(sinkExpiresAt, Date.now() + seconds * 1000);
      return new Date(sinkExpiresAt).toISOString();
    },
    { validator: refuseWhenDecided },
  );
  setHandler(
    finishRemoteRun,
    async (report) => {
      await start();
      decided ??=
        report.status === 'success'
          ? { status: 'success', output: report.output, outputRef: report.outputRef }
          : { status: 'failed', error: `The remote runner reported a failure: ${report.error}` };
      await condition(() => final !== undefined);
      return final!;
    },
    { validator: refuseWhenDecided },
  );

  try {
    while (!decided) {
      const expiry = sinkExpiresAt;
      const wakeAt = Math.min(expiry, timeoutAt);
      const changed = await condition(() => decided !== undefined || sinkExpiresAt !== expiry, Math.max(1, wakeAt - Date.now()));
      if (changed) continue;
      if (Date.now() >= timeoutAt) decided = { status: 'timeout', error: `The run exceeded its timeout of ${input.timeoutSeconds} s` };
      else if (Date.now() >= sinkExpiresAt) {
        expired = true;
        decided = { status: 'failed', error: `${SINK_EXPIRED_ERROR} at ${new Date(sinkExpiresAt).toISOString()} without a final result` };
      }
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    decided = { status: 'cancelled', error: 'The run was cancelled' };
  }
  final = await finalize(input.runId, decided);
  await condition(allHandlersFinished);
  return final;
}
