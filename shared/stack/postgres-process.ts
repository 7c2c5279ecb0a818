// The embedded Postgres in a process (and process group) of its own, so that Ctrl-C reaches
// only `npm start`, which then stops API, worker, Temporal and Postgres in that order.
// Protocol: prints `READY <url>` once up; stops Postgres on SIGTERM. A failure to start is one
// line on stderr and exit code 1.
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from './embedded-postgres.ts';

const [dataDir, preferredPort] = process.argv.slice(2);
let pg: EmbeddedPostgresHandle;
try {
  pg = await startEmbeddedPostgres({ dataDir, preferredPort: Number(preferredPort), persistent: true });
} catch (err) {
  console.error(`[postgres] ${(err as Error).message}`);
  process.exit(1);
}
process.stdout.write(`READY ${pg.url}\n`);
const stop = async () => {
  await pg.stop();
  process.exit(0);
};
process.removeAllListeners('SIGINT');
process.removeAllListeners('SIGTERM');
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
