// Reads (issue 18): `GET /api/runs/{id}` with an API key at 50 connections against a bare Koa +
// pg primary-key read (bare-read-server.ts), and the wake-up of long-polls (`?wait=`) after the
// terminal commit, 1000 of them open at once, against a raw pg NOTIFY -> LISTEN round trip. The
// API runs as its own process; the runs are pending rows no worker takes, finished by this
// process in a transaction that announces them as finalizeRun does.
import { spawn } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { Agent } from 'undici';
import { createKnex } from '../../shared/db/knex.ts';
import { notifyRunEvent } from '../../shared/runs/events.ts';
import { freePort } from '../../shared/stack/ports.ts';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { mochaGlobalSetup, mochaGlobalTeardown } from '../setup/global.ts';
import { newKey, newOrg } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';
import { stack } from '../support/stack.ts';
import { startServiceProcesses } from './processes.ts';
import { cpuUs, postgresCpuUs } from './cpu.ts';
import { pct, printTable, type Row, resultsOf, say, writeResult } from './report.ts';

const CONNECTIONS = 50;
const SECONDS = 8;
const WAITERS = 1000;
const MEASURED = 200;

say('starting the stack (embedded Postgres, Temporal dev server) and the API alone (no worker: runs stay pending)...');
await mochaGlobalSetup();
const service = await startServiceProcesses({}, [], ['api/main.ts']);
const api = { url: service.apiUrl };
const knex = createKnex(stack().databaseUrl, { min: 1, max: 4 });

const org = await newOrg(api, 'bench-reads');
await importAgent(org.client, { name: '@bench/idle', input: { type: 'object' } });
// Keys for the readers (SPEC 8.1: GETs are limited per identity, 600 a minute by default, so the
// load is spread over many keys) and for the waiters (a caller keeps at most 10 waits open).
const keys = await Promise.all(Array.from({ length: WAITERS / 10 }, (_, i) => newKey(api, org.client, { name: `bench-reads-${i}` }).then((k) => k.key)));
const launched = await org.client.post('/api/agents/@bench/idle/run', { input: {} });
if (launched.status !== 201) throw new Error(`launch failed: ${launched.status} ${launched.text}`);
const runId = launched.body.id as string;

/** req/s at 50 connections, and the CPU per request of the server process (`pid`) and of Postgres. */
async function cannon(url: string, authorized: boolean, pid?: number): Promise<{ rps: number; serverUs: number; postgresUs: number }> {
  let n = 0;
  const server0 = pid ? cpuUs(pid) : 0;
  const pg0 = postgresCpuUs();
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [{ setupRequest: (req) => (authorized ? { ...req, headers: { ...req.headers, authorization: `Bearer ${keys[n++ % keys.length]}` } } : req) }],
  });
  if (result.non2xx > 0) throw new Error(`${url}: ${result.non2xx} answers were not 2xx`);
  const done = result.requests.total;
  return { rps: result.requests.average, serverUs: pid ? (cpuUs(pid) - server0) / done : 0, postgresUs: (postgresCpuUs() - pg0) / done };
}

say(`1/2 GET /api/runs/{id}, ${CONNECTIONS} connections for ${SECONDS} s, against bare Koa + pg...`);
const barePort = await freePort();
const bare = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', path.join(PROJECT_ROOT, 'test/bench/bare-read-server.ts')], {
  env: { ...process.env, DATABASE_URL: stack().databaseUrl, PORT: String(barePort) },
  stdio: ['ignore', 'pipe', 'inherit'],
});
await new Promise<void>((resolve) => bare.stdout!.once('data', () => resolve()));
const bareUrl = `http://127.0.0.1:${barePort}/runs/${runId}`;
const serviceUrl = `${api.url}/api/runs/${runId}`;
await cannon(bareUrl, false); // warm up the baseline (the service was warmed by its setup)
const readService = await cannon(serviceUrl, true, service.pids[0]);
const readBare = await cannon(bareUrl, false, bare.pid);
bare.kill();

say(`2/2 long-poll wake-up: ${WAITERS} waits open at once, ${MEASURED} runs finished one at a time...`);
const template = await knex('runs').where({ id: runId }).first();
const ids = Array.from({ length: WAITERS }, (_, i) => `run_benchwait${String(i).padStart(5, '0')}${Date.now()}`);
await knex.batchInsert(
  'runs',
  ids.map((id) => ({
    ...template,
    id,
    input: JSON.stringify(template.input),
    usage: JSON.stringify(template.usage),
    connections: JSON.stringify(template.connections),
    created_at: new Date(),
  })),
  200,
);
const before = Number((await knex.raw('select count(*)::int as n from pg_stat_activity where datname = current_database()')).rows[0].n);
const dispatcher = new Agent({ connections: null, pipelining: 0 });
const woke = new Map<string, number>();
const waits = ids.map((id, i) =>
  fetch(`${api.url}/api/runs/${id}?wait=55`, { headers: { authorization: `Bearer ${keys[Math.floor(i / 10)]}` }, dispatcher } as RequestInit).then(
    async (res) => {
      woke.set(id, performance.now());
      const body = (await res.json()) as { status: string };
      if (body.status !== 'success') throw new Error(`${id}: woke with ${body.status}`);
    },
  ),
);
await new Promise((r) => setTimeout(r, 3000)); // every wait registered
const during = Number((await knex.raw('select count(*)::int as n from pg_stat_activity where datname = current_database()')).rows[0].n);

async function finish(id: string): Promise<number> {
  await knex.transaction(async (trx) => {
    await trx('runs')
      .where({ id })
      .update({ status: 'success', started_at: trx.fn.now(), finished_at: trx.fn.now(), result: JSON.stringify({ output: {} }) });
    await notifyRunEvent(trx, { kind: 'status', runId: id, orgId: template.org_id, spaceId: template.space_id, status: 'success' });
  });
  return performance.now();
}
const wake: number[] = [];
for (const id of ids.slice(0, MEASURED)) {
  const committed = await finish(id);
  while (!woke.has(id)) await new Promise((r) => setImmediate(r));
  wake.push(woke.get(id)! - committed);
}
for (const id of ids.slice(MEASURED)) await finish(id);
await Promise.all(waits);

// The baseline: NOTIFY on one connection, LISTEN on another, the same payload size.
const listener = new pg.Client({ connectionString: stack().databaseUrl });
const notifier = new pg.Client({ connectionString: stack().databaseUrl });
await listener.connect();
await notifier.connect();
await listener.query('listen bench_wake');
const raw: number[] = [];
for (let i = 0; i < MEASURED; i++) {
  const got = new Promise<number>((resolve) => listener.once('notification', () => resolve(performance.now())));
  const t0 = performance.now();
  await notifier.query("select pg_notify('bench_wake', $1)", [JSON.stringify({ kind: 'status', runId: ids[i], status: 'success' })]);
  raw.push((await got) - t0);
}
await listener.end();
await notifier.end();

const rows: Row[] = [
  ['GET run req/s at 50 conns', readService.rps, readBare.rps],
  ['  server CPU per GET (us)', readService.serverUs, readBare.serverUs],
  ['  Postgres CPU per GET (us)', readService.postgresUs, readBare.postgresUs],
  ['long-poll wake-up p50 (ms)', pct(wake, 50), pct(raw, 50)],
  ['long-poll wake-up p95 (ms)', pct(wake, 95), pct(raw, 95)],
];
printTable(rows, 'bare');
console.log(
  `\nbare = Koa + pg primary-key read (req/s; CPU per request of the serving process and of all Postgres processes, from /proc, ` +
    `while autocannon ran); raw pg NOTIFY -> LISTEN round trip, send to receipt (wake-up, measured from the terminal commit's ` +
    `acknowledgement; issue 18's target is a p50 of 20 ms). Database connections while ${WAITERS} waits were open: ${during} ` +
    `(before: ${before}).`,
);
writeResult('reads', {
  when: new Date().toISOString(),
  machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
  results: resultsOf(rows, 'bare'),
  waiters: WAITERS,
  dbConnections: { before, during },
});

await dispatcher.close();
await knex.destroy();
await service.stop();
await mochaGlobalTeardown();
process.exit(0);
