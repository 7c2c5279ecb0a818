// The task queues (DESIGN.md 2, workers/README.md), named once: the workers poll them, the
// starters (temporal/starters/) start workflows on them, and runAgent and chatSession schedule
// their sandbox activities on the sandbox queue. Names only: the workflow bundle includes this file.

/** The run workflows (runAgent, remoteRun, scheduledRun ticks, chatSession) and their short activities. */
export const AGENT_RUNS_TASK_QUEUE = 'agent-runs';

/**
 * executeAgent and chat turns, apart from the run workflows' own: a worker serves it with
 * WORKER_MAX_CONCURRENT_RUNS slots, and a run waiting for one stays `pending`.
 */
export const AGENT_SANDBOX_TASK_QUEUE = 'agent-sandboxes';

/** The rest: webhook deliveries and outboxes, inline-package purges, connect logins, token refreshes, the file sweep, bulk run jobs. */
export const PLATFORM_TASK_QUEUE = 'platform';
