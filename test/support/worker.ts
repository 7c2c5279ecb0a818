// An agent worker for tests: in-process (sharing one workflow bundle), or as a child process
// that a test can SIGKILL.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, makeTelemetryFilterString, Runtime, type WorkflowBundle } from '@temporalio/worker';
import { loadConfig } from '../../shared/config.ts';
import { createKnex } from '../../shared/db/knex.ts';
import { createLogger, type Logger } from '../../shared/log.ts';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { createServiceWorkers, WORKFLOWS_PATH } from '../../workers/service-workers.ts';
import type { Client } from './api.ts';
import { stack } from './stack.ts';

/** One key for every test process, so the API encrypts what the worker decrypts. */
export const TEST_SECRETS_KEY = randomBytes(32).toString('base64');

let bundle: Promise<WorkflowBundle> | undefined;
export function workflowBundle(): Promise<WorkflowBundle> {
  bundle ??= bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: { trace() {}, debug() {}, info() {}, log() {}, warn: console.warn, error: console.error },
  });
  return bundle;
}

export function workerEnv(env: Record<string, string> = {}): Record<string, string> {
  return { LOG_LEVEL: 'silent', SECRETS_KEY: TEST_SECRETS_KEY, EGRESS_ALLOW_INTERNAL_HOSTS: '127.0.0.1', ...env };
}

let runtimeInstalled = false;

/** Temporal's SDK and core log only errors in tests; installed once per process. */
export function quietTemporalRuntime(): void {
  if (runtimeInstalled) return;
  Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } } });
  runtimeInstalled = true;
}

export async function startTestWorker(env: Record<string, string> = {}, log?: Logger) {
  quietTemporalRuntime();
  const config = loadConfig(workerEnv(env));
  const knex = createKnex(stack().databaseUrl, { min: 0, max: 4 });
  const service = await createServiceWorkers({
    config,
    knex,
    log: log ?? createLogger(config.logLevel, 'worker-test'),
    temporalAddress: stack().temporalAddress,
    workflowBundle: await workflowBundle(),
  });
  const running = service.run();
  return {
    /** `GET /metrics` of the worker when WORKER_METRICS_PORT is in `env`. */
    metricsUrl: service.metricsUrl,
    async stop() {
      service.shutdown();
      await running;
      await service.close();
      await knex.destroy();
    },
  };
}

/**
 * The real worker entry point as a child process; `node` is the binary it runs on (this
 * process's unless given), `stdout: 'pipe'` keeps its log lines for the test to read.
 */
export function spawnWorkerProcess(env: Record<string, string> = {}, opts: { node?: string; stdout?: 'pipe' } = {}): ChildProcess {
  return spawn(opts.node ?? process.execPath, ['--disable-warning=ExperimentalWarning', path.join(PROJECT_ROOT, 'workers', 'main.ts')], {
    env: { ...process.env, ...workerEnv(env), DATABASE_URL: stack().databaseUrl, TEMPORAL_ADDRESS: stack().temporalAddress },
    stdio: ['ignore', opts.stdout ?? 'ignore', 'inherit'],
  });
}

/**
 * Launches a run of `agent` and waits for its end, failing at once should the worker process
 * `child` exit first (a test whose worker dies would otherwise wait out its long-polls).
 */
export async function runOnWorkerProcess(child: ChildProcess, client: Client, agent: string, input: Record<string, unknown>): Promise<any> {
  const launched = await client.post(`/api/agents/${agent}/run`, { input });
  if (launched.status !== 201) throw new Error(`launch answered ${launched.status}: ${launched.text}`);
  const exited = once(child, 'exit').then(([code, signal]) => {
    throw new Error(`the worker exited (${signal ?? code}) before the run ended`);
  });
  exited.catch(() => undefined);
  for (;;) {
    const res = await Promise.race([client.get(`/api/runs/${launched.body.id}?wait=30`), exited]);
    if (!['pending', 'running'].includes(res.body.status)) return res.body;
  }
}
