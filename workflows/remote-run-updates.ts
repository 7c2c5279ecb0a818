// The updates a remote run's workflow accepts from its sink (api/routes/runs/sink*.ts). Kept
// apart from the workflow so the API imports names and types, not workflow code.
import { defineUpdate } from '@temporalio/workflow';

/** What the runner reported as its end: a result to judge against the output schema, or a failure. */
export type RemoteReport = { status: 'success'; output: unknown } | { status: 'failed'; error: string };

/** pending -> running (run.started); answers the run's status. */
export const startRemoteRun = defineUpdate<string>('startRemoteRun');
/** Moves the sink's expiry to now + seconds; answers the new expiry (ISO 8601). */
export const extendSink = defineUpdate<string, [number]>('extendSink');
/** The final report; answers the terminal status once it is written. */
export const finishRemoteRun = defineUpdate<string, [RemoteReport]>('finishRemoteRun');
