// Schedule ticks in tests: triggered through Temporal, never by waiting for the clock.
import type { Client as TemporalClient } from '@temporalio/client';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Triggers one tick of schedule `id` and returns what the tick workflow returned (its run id, or
 * null). Tick workflow ids carry the time to the second: a second tick of the same schedule
 * within that second is the same tick.
 */
export async function fireSchedule(temporal: TemporalClient, id: string): Promise<string | null> {
  const handle = temporal.schedule.getHandle(id);
  const before = (await handle.describe()).info.numActionsTaken;
  await handle.trigger();
  for (let i = 0; i < 300; i++) {
    const d = await handle.describe();
    if (d.info.numActionsTaken > before) {
      const { workflowId, firstExecutionRunId } = d.info.recentActions.at(-1)!.action.workflow;
      return temporal.workflow.getHandle(workflowId, firstExecutionRunId).result();
    }
    await sleep(100);
  }
  throw new Error(`schedule ${id} took no action`);
}
