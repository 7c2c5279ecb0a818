// The baseline for the benchmark: a bare workflow whose one activity spawns `node -e 0` in the
// same sandbox the agent runs use. Bundled only by the benchmark's worker.
import { proxyActivities } from '@temporalio/workflow';

const { spawnNothing } = proxyActivities<{ spawnNothing(): Promise<string> }>({ startToCloseTimeout: '1 minute' });

export async function bareSandboxWorkflow(): Promise<string> {
  return spawnNothing();
}

export async function emptyWorkflow(): Promise<void> {}
