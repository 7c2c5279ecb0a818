// The updates a remote run's workflow accepts from its sink (api/routes/runs/sink*.ts). Kept
// apart from the workflow so the API imports names and types, not workflow code.
import { defineUpdate } from '@temporalio/workflow';

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
