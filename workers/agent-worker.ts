// The worker for run workflows: registers runAgent (bundled from workflows/) and the run
// activities with their injected resources.
import path from 'node:path';
import { NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import type { Knex } from 'knex';
import { createExecuteAgentActivity } from '../activities/execute-agent.ts';
import { createRunStateActivities } from '../activities/run-state.ts';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/log.ts';
import { temporalConnectionOptions } from '../shared/temporal-connection.ts';
import { PROJECT_ROOT } from '../temporal/cli.ts';
import { AGENT_RUNS_TASK_QUEUE } from '../shared/runs/launch.ts';

export const WORKFLOWS_PATH = path.join(PROJECT_ROOT, 'workflows', 'index.ts');

export async function createAgentWorker(opts: {
  config: Config;
  knex: Knex;
  log: Logger;
  temporalAddress: string;
  /** A prebuilt bundle (tests build one and share it); otherwise bundled at start. */
  workflowBundle?: WorkflowBundle;
}): Promise<{ worker: Worker; connection: NativeConnection }> {
  const { config, knex, log } = opts;
  const connection = await NativeConnection.connect(temporalConnectionOptions(config, opts.temporalAddress) as never);
  const deps = { config, knex, log };
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: AGENT_RUNS_TASK_QUEUE,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    activities: { ...createRunStateActivities(deps), ...createExecuteAgentActivity(deps) },
    shutdownGraceTime: '10 seconds',
  });
  return { worker, connection };
}
