// Worker process entry: `node workers/main.ts` with DATABASE_URL, TEMPORAL_ADDRESS and SECRETS_KEY set
// (npm start sets both). Scale out by running several.
import type { LogLevel } from '@temporalio/worker';
import { applyProcessTuning, WORKER_SEMI_SPACE_MB } from '../shared/stack/tuned-process.ts';

// Before anything else loads: this process may start again with its memory settings.
applyProcessTuning(WORKER_SEMI_SPACE_MB);
const { DefaultLogger, Runtime } = await import('@temporalio/worker');
const { loadServiceConfig } = await import('../shared/config.ts');
const { createKnex } = await import('../shared/db/knex.ts');
const { createLogger } = await import('../shared/log.ts');
const { freeLoopbackPort } = await import('../shared/observability/metrics.ts');
const { createTracing } = await import('../shared/observability/tracing.ts');
const { createServiceWorkers } = await import('./service-workers.ts');
const { useSandboxReachableTmpDir } = await import('./sandbox-startup.ts');

const config = loadServiceConfig('worker');
const log = createLogger(config.logLevel, 'worker');
useSandboxReachableTmpDir(log);
const sdkLevel: LogLevel = ({ trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN' } as const)[config.logLevel as 'info'] ?? 'ERROR';
// With WORKER_METRICS_PORT, the SDK's own metrics (temporal_*: polls, task latencies, slots) are
// exported by its core on a loopback port and appended to this worker's GET /metrics.
const temporalMetricsPort = config.workerMetricsPort !== undefined ? await freeLoopbackPort() : undefined;
Runtime.install({
  shutdownSignals: [], // ours below: shutting down drains first
  ...(temporalMetricsPort ? { telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${temporalMetricsPort}` } } } } : {}),
  // The SDK's own log lines go through pino like ours.
  logger: new DefaultLogger(sdkLevel, (entry) =>
    log[entry.level === 'TRACE' ? 'trace' : (entry.level.toLowerCase() as 'info')]({ sdk: entry.meta }, entry.message),
  ),
});
const knex = createKnex(config.databaseUrl);
const tracing = createTracing({ serviceName: 'worker', otlpEndpoint: config.otlpEndpoint });
const service = await createServiceWorkers({
  config,
  knex,
  log,
  temporalAddress: config.temporalAddress,
  tracing,
  temporalMetricsUrl: temporalMetricsPort ? `http://127.0.0.1:${temporalMetricsPort}/metrics` : undefined,
});
if (service.metricsUrl) log.info({ url: service.metricsUrl }, 'worker metrics listening');
log.info({ taskQueues: service.workers.map((w) => w.options.taskQueue) }, 'workers polling');
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log.info({ signal }, 'worker draining: running agents are handed over, short activities finish');
    service.shutdown();
  });
}
try {
  await service.run(); // resolves after SIGINT/SIGTERM once in-flight tasks finish or the grace time ends
} finally {
  await service.close();
  await knex.destroy();
  await tracing.shutdown(); // flushes the last spans
  log.info('worker stopped');
}
