// The benchmark's baseline worker, a process of its own like the agent worker: task queue
// `bench`, one activity that spawns `node -e 0` in a fresh sandbox of the kind agent runs use,
// as many at once as the agent worker has run slots (WORKER_MAX_CONCURRENT_RUNS, from the same
// environment): the same machine budget, where SDK's default of 100 would start every sandbox
// of a 50-run burst at once on two cores.
import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { spawnSandbox } from '../../activities/sandbox/spawn.ts';
import { loadConfig } from '../../shared/config.ts';

Runtime.install({ logger: new DefaultLogger('ERROR'), shutdownSignals: ['SIGTERM', 'SIGINT'] });
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
const worker = await Worker.create({
  connection,
  taskQueue: 'bench',
  maxConcurrentActivityTaskExecutions: loadConfig().workerMaxConcurrentRuns,
  workflowsPath: path.join(import.meta.dirname, 'bare-workflow.ts'),
  activities: {
    async spawnNothing() {
      const sandbox = spawnSandbox({ name: `bench-${Date.now()}-${Math.random().toString(36).slice(2)}`, nodeArgs: ['-e', '0'], memoryMb: 1536, cpus: 2 });
      const exit = await sandbox.exited;
      return `${sandbox.mode}:${exit.code}`;
    },
  },
});
await worker.run();
await connection.close();
