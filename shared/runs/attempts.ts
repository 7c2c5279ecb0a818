// How runAgent retries executeAgent (DESIGN.md section 8), shared by the workflow that schedules
// the attempts and the activity that judges them. No imports: the workflow bundle includes it.
// Its queue and its `sandboxStarted` signal are the Temporal contract's (temporal/contract/).

/** A worker silent this long has lost its run; the next attempt resumes it elsewhere. */
export const HEARTBEAT_TIMEOUT_SECONDS = 10;

/**
 * The longest the worker holds an attempt's heartbeat back (the SDK's throttle; its default is 0.8
 * of the timeout, 8 s). A cancel, or the run's timeout, reaches the attempt only with a heartbeat's
 * answer: with heartbeats every 2 s (activities/sandbox/supervise.ts) each goes out, so the sandbox
 * is stopped within about 2 s, not 8 s during which the agent went on calling its model.
 */
export const HEARTBEAT_THROTTLE = '1 second';

/**
 * Retries of executeAgent. Attempts end in a retry only when their worker is lost (a missed
 * heartbeat) or hands the run over (a draining worker); every other failure is non-retryable.
 * The activity itself ends the run after RUN_MAX_WORKER_LOSSES losses (it knows the setting and
 * which attempts were handovers); this ceiling only bounds a worker that keeps draining.
 */
export const EXECUTE_AGENT_RETRY = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 seconds', maximumAttempts: 50 } as const;
