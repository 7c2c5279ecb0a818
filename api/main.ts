// API process entry: `node api/main.ts` with DATABASE_URL, TEMPORAL_ADDRESS and SECRETS_KEY set
// (npm start sets both for its children). Scale out by running several.
import { applyProcessTuning } from '../shared/stack/tuned-process.ts';

// Before anything else loads: this process may start again with its memory settings.
applyProcessTuning();
const { loadServiceConfig } = await import('../shared/config.ts');
const { createLogger } = await import('../shared/log.ts');
const { startApiServer } = await import('./server.ts');

const config = loadServiceConfig('API');
const log = createLogger(config.logLevel, 'api');
const api = await startApiServer(config, { databaseUrl: config.databaseUrl, temporalAddress: config.temporalAddress, log });
log.info({ url: api.url, port: api.port }, 'API listening');

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'API stopping');
    await api.close();
    process.exit(0);
  });
}
