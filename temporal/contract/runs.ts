// What the run workflows (workflows/run-agent.ts, workflows/remote-run.ts) accept from outside:
// executeAgent's signal, and the updates of a remote run's sink (shared/runs/sink.ts). Defined
// once for the workflow and its callers; only @temporalio/workflow's definitions here, so the
// workflow bundle includes this file and the API and activities import it without workflow code.
import { defineSignal, defineUpdate } from '@temporalio/workflow';

/**
 * What executeAgent says with its start. `announced`: it wrote the run `running` and published
 * `run.started` itself, so runAgent has neither left to do (absent: runAgent does both, as for
 * attempts of older workers).
 */
export interface SandboxStart {
  announced?: boolean;
}

/** Sent by executeAgent when it holds a slot and starts the sandbox: the run is `running` from then on. */
export const sandboxStarted = defineSignal<[SandboxStart?]>('sandboxStarted');

/**
 * What the runner reported as its end: a result to judge against the output schema (its output,
 * or the reference of a large one kept in the database: shared/runs/pending-output.ts), or a failure.
 */
export type RemoteReport = { status: 'success'; output?: unknown; outputRef?: string } | { status: 'failed'; error: string };

/** pending -> running (run.started); answers the run's status. */
export const startRemoteRun = defineUpdate<string>('startRemoteRun');
/** Pushes the sink's expiry back to now + seconds (never earlier); answers the expiry (ISO 8601). */
export const extendSink = defineUpdate<string, [number]>('extendSink');
/** The final report; answers the terminal status once it is written. */
export const finishRemoteRun = defineUpdate<string, [RemoteReport]>('finishRemoteRun');

/** Failure types of a refused update: the API answers 410 `sink_expired` or 409 `run_finished`. */
export const SINK_EXPIRED = 'SinkExpired';
export const RUN_FINISHED = 'RunFinished';

/** The error of a run its sink's expiry ended; how the API tells that ending from the others. */
export const SINK_EXPIRED_ERROR = 'The remote runner stopped reporting: its sink expired';
