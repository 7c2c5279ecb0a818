// Worker process entry: `node workers/main.ts` with DATABASE_URL and TEMPORAL_ADDRESS set
// (npm start sets both). Scale out by running several.
import { DefaultLogger, type LogLevel, Runtime } from '@temporalio/worker';
import { ConfigError, loadConfig } from '../shared/config.ts';
import { createKnex } from '../shared/db/knex.ts';
import { createLogger } from '../shared/log.ts';
import { createServiceWorkers } from './service-workers.ts';

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
  if (!config.databaseUrl || !config.temporalAddress || !config.secretsKey) throw new ConfigError('DATABASE_URL, TEMPORAL_ADDRESS and SECRETS_KEY are required to run a worker alone; `npm start` sets them');
} catch (err) {
  console.error(`configuration error: ${(err as Error).message}`);
  process.exit(1);
}
const log = createLogger(config.logLevel, 'worker');
const sdkLevel: LogLevel = ({ trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN' } as const)[config.logLevel as 'info'] ?? 'ERROR';
Runtime.install({
  shutdownSignals: ['SIGINT', 'SIGTERM'],
  // The SDK's own log lines go through pino like ours.
  logger: new DefaultLogger(sdkLevel, (entry) => log[entry.level === 'TRACE' ? 'trace' : (entry.level.toLowerCase() as 'info')]({ sdk: entry.meta }, entry.message)),
});
const knex = createKnex(config.databaseUrl!);
const service = await createServiceWorkers({ config, knex, log, temporalAddress: config.temporalAddress! });
log.info({ taskQueues: service.workers.map((w) => w.options.taskQueue) }, 'workers polling');
try {
  await service.run(); // resolves after SIGINT/SIGTERM once in-flight tasks finish or the grace time ends
} finally {
  await service.close();
  await knex.destroy();
  log.info('worker stopped');
}
