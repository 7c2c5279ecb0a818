// The steps every run workflow shares (runAgent, remoteRun): database transitions as local
// activities (unless a sandbox run's executeAgent made them, below), the RunStatus search
// attribute, and the terminal write with its event.
import { CancellationScope, patched, proxyLocalActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { createPublishRunEventActivity } from '../activities/publish-run-event.ts';
import type { createRunStateActivities, RunOutcome } from '../activities/run-state.ts';
import type { RunStatus } from '../shared/runs/model.ts';
import { RunStatusKey } from '../temporal/search-attributes.ts';

type StateActivities = ReturnType<typeof createRunStateActivities> & ReturnType<typeof createPublishRunEventActivity>;

// Short database transitions run as local activities: no task queue round trip through the
// server, which halves the server's work per run; Temporal still records and retries them.
const state = proxyLocalActivities<StateActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 20 },
});

function setStatus(status: string): void {
  upsertSearchAttributes([{ key: RunStatusKey, value: status }] as never);
}

/**
 * A sandbox run's executeAgent writes its start and its end and publishes their events itself
 * (it says so: `announced`, `ended`), and runAgent then only sets RunStatus: no local activity,
 * so neither task waits for the worker's database round trips, and the history holds no marker
 * it does not need. Histories from before, or from a worker that did them as local activities,
 * replay as they ran: one patch for each step, decided by the task that takes it (a task of a
 * worker without the change, between two of a worker with it, stays as it ran).
 */
const START_ANNOUNCED = 'run-start-announced-by-activity';
const END_ANNOUNCED = 'run-end-announced-by-activity';

/**
 * pending -> running, with `run.started`; false when the run was no longer pending. `announced`:
 * executeAgent did both already (its `sandboxStarted` signal said so).
 */
export async function markStarted(runId: string, announced = false): Promise<boolean> {
  if (announced && patched(START_ANNOUNCED)) {
    setStatus('running');
    return true;
  }
  if (!(await state.markRunRunning(runId))) return false;
  setStatus('running');
  await state.publishRunEvent(runId, 'run.started');
  return true;
}

/**
 * Writes the terminal status (a success is judged against the output schema) and emits its event,
 * even when cancelled. `ended`: the status executeAgent wrote and announced (its checkpoints
 * deleted), when it did.
 */
export function finalize(runId: string, outcome: RunOutcome, ended?: RunStatus): Promise<string> {
  return CancellationScope.nonCancellable(async () => {
    if (ended && patched(END_ANNOUNCED)) {
      setStatus(ended);
      return ended;
    }
    const status = await state.finalizeRun(runId, outcome);
    setStatus(status);
    await state.publishRunEvent(runId, `run.${status}`);
    return status;
  });
}
