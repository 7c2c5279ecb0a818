// The service as production runs it, for benchmarks: API and worker (and any extra entry
// point) as processes of their own on the benchmark's stack.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { waitForHealthy } from '../../shared/stack/health.ts';
import { freePort } from '../../shared/stack/ports.ts';
import { PROJECT_ROOT } from '../../temporal/cli.ts';
import { stack } from '../support/stack.ts';
import { workerEnv } from '../support/worker.ts';

export async function startServiceProcesses(env: Record<string, string>, extraEntries: string[] = []): Promise<{ apiUrl: string; stop(): Promise<void> }> {
  const port = await freePort();
  const base = { ...process.env, ...workerEnv(env), LOG_LEVEL: 'error', DATABASE_URL: stack().databaseUrl, TEMPORAL_ADDRESS: stack().temporalAddress };
  const node = (entry: string, extra: Record<string, string> = {}): ChildProcess =>
    spawn(process.execPath, ['--disable-warning=ExperimentalWarning', path.join(PROJECT_ROOT, entry)], { env: { ...base, ...extra }, stdio: ['ignore', 'ignore', 'inherit'] });
  const children = [node('api/main.ts', { PORT: String(port), HOST: '127.0.0.1' }), node('workers/main.ts'), ...extraEntries.map((e) => node(e))];
  const apiUrl = `http://127.0.0.1:${port}`;
  await waitForHealthy(`${apiUrl}/api/health`, 60_000);
  return {
    apiUrl,
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
