// The steps every run workflow shares (runAgent, remoteRun): database transitions as local
// activities, the RunStatus search attribute, and the terminal write with its event.
import { CancellationScope, proxyLocalActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { createPublishRunEventActivity } from '../activities/publish-run-event.ts';
import type { createRunStateActivities, RunOutcome } from '../activities/run-state.ts';
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

/** pending -> running, with `run.started`; false when the run was no longer pending. */
export async function markStarted(runId: string): Promise<boolean> {
  if (!(await state.markRunRunning(runId))) return false;
  setStatus('running');
  await state.publishRunEvent(runId, 'run.started');
  return true;
}

/** Writes the terminal status (a success is judged against the output schema) and emits its event, even when cancelled. */
export function finalize(runId: string, outcome: RunOutcome): Promise<string> {
  return CancellationScope.nonCancellable(async () => {
    const status = await state.finalizeRun(runId, outcome);
    setStatus(status);
    await state.publishRunEvent(runId, `run.${status}`);
    return status;
  });
}
