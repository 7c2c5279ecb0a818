// Launches `temporal server start-dev` for `npm start` and `npm test` when TEMPORAL_ADDRESS is
// not set: SQLite file (or in-memory for tests), the Web UI, our search attributes registered.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { freePort, waitForPort } from '../shared/stack/ports.ts';
import { findBinary } from './cli.ts';
import { SEARCH_ATTRIBUTES } from './search-attributes.ts';

export interface TemporalDevServer {
  address: string;
  uiUrl: string | null;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Dynamic config that turns on task-queue fairness keys (the new matcher carries them). One
 * partition per queue: fairness holds within a partition, and a single dev server has no load
 * to spread (a cluster keeps its partitions and gets fairness approximately).
 */
export const FAIRNESS_DYNAMIC_CONFIG = [
  'matching.useNewMatcher=true',
  'matching.enableFairness=true',
  'matching.numTaskqueueReadPartitions=1',
  'matching.numTaskqueueWritePartitions=1',
];

/**
 * How often the history service may read its task queues. A task (a workflow or activity task
 * to dispatch, a timer, a visibility update) waits in its shard's queue until the next read, and
 * a reader polls at most `MaxPollRPS` times a second: 20 by default, built for clusters of
 * hundreds of shards. The dev server has one shard, so under steady load every dispatch waited
 * up to 50 ms (measured: 30 to 50 ms from scheduled to started on each workflow and activity
 * task once runs follow one another). 1000 lets a read follow each new task, as it does when
 * the server is idle.
 */
export const QUEUE_POLL_DYNAMIC_CONFIG = ['transfer', 'timer', 'visibility'].map((queue) => `history.${queue}ProcessorMaxPollRPS=1000`);

/**
 * The SQLite file of `npm start`'s dev server in WAL mode with `synchronous=NORMAL`. By default
 * (rollback journal, FULL) each of Temporal's writes waited for two or three fsyncs: starting a
 * workflow, dispatching a task, completing one; a run makes about ten and felt each (measured
 * from outside on `npm start`: POST to terminal p50 109 to 199 ms against 84 to 92 ms with these,
 * docs/performance.md). In WAL mode NORMAL stays consistent and loses nothing when a process
 * dies; the machine itself crashing (power, kernel) may lose Temporal's last commits, which a
 * development server may. A cluster's persistence is its own.
 */
export const SQLITE_FILE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

export async function startTemporalDevServer(opts: {
  cliPath?: string;
  preferredPort: number;
  preferredUiPort: number;
  /** SQLite file; omitted = in-memory (tests). */
  dbFile?: string;
  ui: boolean;
  namespace: string;
  logFile?: string;
}): Promise<TemporalDevServer> {
  const bin = findBinary('temporal', opts.cliPath);
  const port = await freePort(opts.preferredPort);
  const uiPort = opts.ui ? await freePort(opts.preferredUiPort === port ? 0 : opts.preferredUiPort) : 0;
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'error'];
  if (opts.namespace !== 'default') args.push('--namespace', opts.namespace);
  if (opts.dbFile) {
    fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile, ...SQLITE_FILE_PRAGMAS.flatMap((pragma) => ['--sqlite-pragma', pragma]));
  }
  if (opts.ui) args.push('--ui-port', String(uiPort), '--ui-disable-news-fetch');
  else args.push('--headless');
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  // Task-queue fairness (runs waiting for sandbox slots are dispatched per organization): off by
  // default in Temporal 1.29+, so the dev server turns it on; a real cluster sets the same keys.
  // And the history queues read as often as tasks arrive (one shard here, see above).
  for (const setting of [...FAIRNESS_DYNAMIC_CONFIG, ...QUEUE_POLL_DYNAMIC_CONFIG]) args.push('--dynamic-config-value', setting);

  const out = opts.logFile ? fs.openSync(opts.logFile, 'a') : 'ignore';
  // Own process group: a Ctrl-C meant for the launcher does not stop Temporal under live workers.
  const child = spawn(bin, args, { stdio: ['ignore', out, out], env: process.env, detached: true });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  try {
    await Promise.race([
      waitForPort(port, '127.0.0.1', 60_000),
      exit.then(() => {
        throw new Error(`temporal server start-dev exited early (code ${child.exitCode})`);
      }),
    ]);
    await waitForNamespace(`127.0.0.1:${port}`, opts.namespace);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    address: `127.0.0.1:${port}`,
    uiUrl: opts.ui ? `http://localhost:${uiPort}` : null,
    process: child,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

/** The namespace exists and the frontend answers (the port opens before it is ready). */
async function waitForNamespace(address: string, namespace: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const connection = await Connection.connect({ address });
  try {
    for (;;) {
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } finally {
    await connection.close();
  }
}
