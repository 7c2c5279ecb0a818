// Mocha global fixtures: bring the stack up once, tear it down at the end.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createKnex, migrateLatest } from '../../shared/db/knex.ts';
import { startEmbeddedPostgres } from '../../shared/stack/embedded-postgres.ts';
import { startTemporalDevServer } from '../../temporal/dev-server.ts';
import { setStack } from '../support/stack.ts';
import { quietTemporalRuntime } from '../support/worker.ts';

const stops: Array<() => Promise<void>> = [];

/** A new empty database on `serverUrl`'s server (its URL), dropped when the run ends. */
export async function freshDatabaseOn(serverUrl: string): Promise<string> {
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  stops.push(async () => {
    const c = new pg.Client({ connectionString: serverUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  });
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function mochaGlobalSetup(): Promise<void> {
  quietTemporalRuntime();
  const t0 = Date.now();
  let databaseUrl: string;
  if (process.env.DATABASE_URL) {
    databaseUrl = await freshDatabaseOn(process.env.DATABASE_URL);
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-pg-'));
    fs.chmodSync(dir, 0o755); // the unprivileged postgres user must reach its data dir
    const db = await startEmbeddedPostgres({ dataDir: path.join(dir, 'data'), preferredPort: 0, persistent: false });
    stops.push(async () => {
      await db.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    databaseUrl = db.url;
  }
  const temporal = await startTemporalDevServer({ preferredPort: 0, preferredUiPort: 0, ui: false, namespace: 'default' });
  stops.push(() => temporal.stop());
  const knex = createKnex(databaseUrl, { min: 0, max: 1 });
  await migrateLatest(knex);
  await knex.destroy();
  setStack({ databaseUrl, temporalAddress: temporal.address });
  console.log(`[test] stack up in ${Date.now() - t0} ms (postgres ${new URL(databaseUrl).port}, temporal ${temporal.address})`);
}

export async function mochaGlobalTeardown(): Promise<void> {
  for (const stop of stops.reverse()) await stop().catch((e) => console.error(`[test] teardown: ${e.message}`));
}
