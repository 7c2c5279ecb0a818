// The service as production runs it, for benchmarks: API and worker (and any extra entry
// point) as processes of their own on the benchmark's stack.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { waitForHealthy } from '../../shared/stack/health.ts';
import { freePort } from '../../shared/stack/ports.ts';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { stack } from '../support/stack.ts';
import { workerEnv } from '../support/worker.ts';

const baseEnv = (env: Record<string, string>) => ({
  ...process.env,
  ...workerEnv(env),
  LOG_LEVEL: 'error',
  DATABASE_URL: stack().databaseUrl,
  TEMPORAL_ADDRESS: stack().temporalAddress,
});

/** `entries` default to the API and one worker; a benchmark that kills workers starts its own with `startWorker`. */
export async function startServiceProcesses(
  env: Record<string, string>,
  extraEntries: string[] = [],
  entries = ['api/main.ts', 'workers/main.ts'],
): Promise<{ apiUrl: string; pids: number[]; stop(): Promise<void> }> {
  const port = await freePort();
  const base = baseEnv(env);
  const node = (entry: string, extra: Record<string, string> = {}): ChildProcess =>
    spawn(process.execPath, ['--disable-warning=ExperimentalWarning', path.join(PROJECT_ROOT, entry)], {
      env: { ...base, ...extra },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  const children = [...entries.map((e) => node(e, e === 'api/main.ts' ? { PORT: String(port), HOST: '127.0.0.1' } : {})), ...extraEntries.map((e) => node(e))];
  const apiUrl = `http://127.0.0.1:${port}`;
  await waitForHealthy(`${apiUrl}/api/health`, 60_000);
  return {
    apiUrl,
    pids: children.map((c) => c.pid!),
    stop: async () => {
      await Promise.all(
        children.map(
          (c) =>
            new Promise((resolve) => {
              c.once('exit', resolve);
              c.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}

const workers = new Set<ChildProcess>();
// Workers a benchmark started do not outlive it, even when it fails.
process.on('exit', () => {
  for (const w of workers) w.kill('SIGKILL');
});

/** A worker process, resolved once it polls its task queues (its `workers polling` log line). */
export function startWorker(env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', path.join(PROJECT_ROOT, 'workers', 'main.ts')], {
    env: { ...baseEnv(env), LOG_LEVEL: 'info', LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  workers.add(child);
  child.once('exit', () => workers.delete(child));
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (seen.includes('"workers polling"')) {
        seen = '';
        resolve(child);
      } else seen = seen.slice(-200);
    });
    child.once('exit', (code) => reject(new Error(`the worker exited with ${code} before polling`)));
  });
}
