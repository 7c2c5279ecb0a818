// The embedded Postgres in a process (and process group) of its own, so that Ctrl-C reaches
// only `npm start`, which then stops API, worker, Temporal and Postgres in that order.
// Protocol: prints `READY <url>` once up; stops Postgres on SIGTERM.
import { startEmbeddedPostgres } from './embedded-postgres.ts';

const [dataDir, preferredPort] = process.argv.slice(2);
const pg = await startEmbeddedPostgres({ dataDir, preferredPort: Number(preferredPort), persistent: true });
process.stdout.write(`READY ${pg.url}\n`);
const stop = async () => {
  await pg.stop();
  process.exit(0);
};
process.removeAllListeners('SIGINT');
process.removeAllListeners('SIGTERM');
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
