// The run path (issues 18, 33): launch acknowledgement, POST to terminal and runs/s against bare
// baselines (client.workflow.start; a workflow whose one activity spawns a fresh sandbox), where a
// sequential run's time goes (run-timeline.ts), and a growth table: POST to terminal and runs/s as
// concurrency goes 1, 10, 50, 200 (worker run slots raised to 200 on both sides), and launch
// acknowledgement with 10k and 1M rows in `runs`. `BENCH_RUN_PHASES` (comma-separated: ack, e2e,
// growth, rows; all by default) runs some phases only, and `BENCH_RUN_LEVELS` (e.g. 50,200) some
// concurrency levels, for before/after comparisons.
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { createKnex } from '../../shared/db/knex.ts';
import { mochaGlobalSetup, mochaGlobalTeardown } from '../setup/global.ts';
import { cpuCounters, cpuMsPer, trackCpu } from './cpu.ts';
import { pct, printTable, type Row, resultsOf, say, writeResult } from './report.ts';
import { printTimeline, type RunTimeline, runTimeline, timelineP50 } from './run-timeline.ts';
import { startServiceProcesses } from './processes.ts';
import { type Client as Http, newKey, newOrg } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { stack } from '../support/stack.ts';

const PHASES = new Set((process.env.BENCH_RUN_PHASES ?? 'ack,e2e,growth,rows').split(','));
/** In-flight runs of the growth table; worker run slots (WORKER_MAX_CONCURRENT_RUNS) match the largest, on both sides. */
const ALL_LEVELS: Array<[concurrency: number, runs: number]> = [
  [1, 20],
  [10, 40],
  [50, 100],
  [200, 400],
];
const SLOTS = Math.max(...ALL_LEVELS.map(([c]) => c));
const LEVELS = ALL_LEVELS.filter(([c]) => !process.env.BENCH_RUN_LEVELS || process.env.BENCH_RUN_LEVELS.split(',').includes(String(c)));

say('starting the stack (embedded Postgres, Temporal dev server)...');
await mochaGlobalSetup();
const model = await new FakeModel().start();
model.setFallback(() => toolCall('output', { ok: true }));
// API, agent worker and baseline worker run as processes of their own, as in production, so
// their event loops do not share this one. Launch limits are raised so the benchmark measures
// the path, not the organization caps.
const limits = {
  PLATFORM_RUN_LIMITS: JSON.stringify({ max_concurrent_per_org: 1000, per_org_global_rate_per_min: 100000 }),
  WORKER_MAX_CONCURRENT_RUNS: String(SLOTS),
};
const service = await startServiceProcesses(limits, ['test/bench/bare-worker.ts']);
const api = { url: service.apiUrl };
const connection = await Connection.connect({ address: stack().temporalAddress });
const temporal = new Client({ connection });

const org = await newOrg(api, 'bench');
await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
await importAgent(org.client, { name: '@bench/trivial', output: { type: 'object', properties: { ok: { type: 'boolean' } } } });
// The launch route allows 20 launches a minute per identity (SPEC 8.2), and a caller keeps at
// most 10 long-polls open: each concurrent slot launches with keys of its own, 18 launches each.
const slots = new Map<number, { client: Http; used: number }>();
let keyCount = 0;
/** A new key; the owner may create 120 a minute (SPEC 8.2), so past that it waits for the window. */
async function freshKey(): Promise<Http> {
  for (;;) {
    try {
      return (await newKey(api, org.client, { name: `bench-${keyCount++}` })).client;
    } catch (err) {
      const wait = /"retry_after":(\d+)/.exec((err as Error).message);
      if (!wait) throw err;
      await new Promise((r) => setTimeout(r, Number(wait[1]) * 1000));
    }
  }
}
async function clientFor(slot: number): Promise<Http> {
  let s = slots.get(slot);
  if (!s || s.used >= 18) {
    s = { client: await freshKey(), used: 0 };
    slots.set(slot, s);
  }
  s.used++;
  return s.client;
}
async function launch(slot = 0): Promise<{ id: string; ms: number; client: Http; sentAt: number; ackAt: number }> {
  const client = await clientFor(slot);
  const t0 = performance.now();
  const sentAt = Date.now();
  const res = await client.post('/api/agents/@bench/trivial/run', { input: {} });
  const ms = performance.now() - t0;
  if (res.status !== 201) throw new Error(`launch failed: ${res.status} ${res.text}`);
  return { id: res.body.id, ms, client, sentAt, ackAt: Date.now() };
}
async function untilDone(client: Http, id: string): Promise<string> {
  for (;;) {
    const res = await client.get(`/api/runs/${id}?wait=55`);
    if (!['pending', 'running'].includes(res.body.status)) return res.body.status;
  }
}
let bareN = 0;
const bareStart = (workflow: string) => temporal.workflow.start(workflow, { taskQueue: 'bench', workflowId: `bench-${bareN++}-${Date.now()}` });

// Warm up both paths.
let firstRun: { id: string; client: Http } | undefined;
for (let i = 0; i < 3; i++) {
  const r = await launch();
  firstRun ??= r;
  await untilDone(r.client, r.id);
  await (await bareStart('bareSandboxWorkflow')).result();
}

const ackRun: number[] = [];
const ackBare: number[] = [];
if (PHASES.has('ack')) {
  say('ack: launch acknowledgement (40 each, one at a time, each run finished before the next)...');
  for (let i = 0; i < 40; i++) {
    const r = await launch();
    ackRun.push(r.ms);
    await untilDone(r.client, r.id);
    const t0 = performance.now();
    const handle = await bareStart('bareSandboxWorkflow');
    ackBare.push(performance.now() - t0);
    await handle.result();
  }
}

const e2eRun: number[] = [];
const e2eBare: number[] = [];
const timelines: RunTimeline[] = [];
if (PHASES.has('e2e')) {
  say('e2e: POST to terminal (25 sequential, each followed by a bare workflow)...');
  const sequential: Array<{ id: string; sentAt: number; ackAt: number; answeredAt: number }> = [];
  for (let i = 0; i < 25; i++) {
    let t0 = performance.now();
    const r = await launch();
    const status = await untilDone(r.client, r.id);
    if (status !== 'success') throw new Error(`bench run ended ${status}`);
    e2eRun.push(performance.now() - t0);
    sequential.push({ id: r.id, sentAt: r.sentAt, ackAt: r.ackAt, answeredAt: Date.now() });
    t0 = performance.now();
    await (await bareStart('bareSandboxWorkflow')).result();
    e2eBare.push(performance.now() - t0);
  }
  for (const r of sequential) timelines.push(await runTimeline(org.client, temporal, r.id, r));
}

/** `total` runs by `concurrency` loops: runs/s, and the p50 and p95 of each one's POST to terminal. */
async function throughput(concurrency: number, total: number, one: (slot: number) => Promise<void>): Promise<{ rps: number; p50: number; p95: number }> {
  let next = 0;
  const each: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, slot) => {
      while (next < total) {
        next++;
        const t = performance.now();
        await one(slot);
        each.push(performance.now() - t);
      }
    }),
  );
  return { rps: total / ((performance.now() - t0) / 1000), p50: pct(each, 50), p95: pct(each, 95) };
}
const runOne = async (slot: number) => {
  const r = await launch(slot);
  const status = await untilDone(r.client, r.id);
  if (status !== 'success') throw new Error(`bench run ended ${status}`);
};
const bareOne = async () => {
  await (await bareStart('bareSandboxWorkflow')).result();
};
// CPU per run at 50 and 200 concurrent, where it goes: the machine (every process on it and the
// kernel), and the processes of each side (the bare side's work is its worker's and Temporal's),
// each with the sandboxes it started where cpuacct groups can follow them (cpu.ts); `stack` sums
// the benchmark's own processes.
const [apiPid, workerPid, bareWorkerPid] = service.pids;
const processPids = { api: apiPid, worker: workerPid, 'bare worker': bareWorkerPid, 'bench client': process.pid };
const grouped = trackCpu(processPids);
const spawning = ['worker', 'bare worker'];
const cpuPerRun: Record<number, { service: Record<string, number>; bare: Record<string, number> }> = {};
type Level = { rps: number; p50: number; p95: number };
const growth: Array<{ concurrency: number; runs: number; service: Level; bare: Level }> = [];
if (PHASES.has('growth')) {
  say(`growth: POST to terminal and runs/s at ${LEVELS.map(([c]) => c).join(', ')} concurrent (${SLOTS} worker run slots)...`);
  for (const [concurrency, runs] of LEVELS) {
    // Every loop's key is made before the clock starts (at most 18 launches a key), so no key is made while timed.
    slots.clear();
    for (let slot = 0; slot < concurrency; slot++) {
      await clientFor(slot);
      slots.get(slot)!.used = 0;
    }
    const c0 = cpuCounters(processPids, spawning);
    const service = await throughput(concurrency, runs, runOne);
    const c1 = cpuCounters(processPids, spawning);
    const bare = await throughput(concurrency, runs, bareOne);
    const c2 = cpuCounters(processPids, spawning);
    growth.push({ concurrency, runs, service, bare });
    if (concurrency >= 50) cpuPerRun[concurrency] = { service: cpuMsPer(c0, c1, runs), bare: cpuMsPer(c1, c2, runs) };
  }
}
const at = (c: number) => growth.find((g) => g.concurrency === c);

const launchAt: Array<{ rows: number; p50: number; insertMs?: number }> = [];
if (PHASES.has('rows')) {
  say('rows: launch acknowledgement with 10k and 1M rows in runs (synthetic finished runs of the bench organization, 30 launches each)...');
  const knex = createKnex(stack().databaseUrl, { min: 0, max: 2 });
  const template = firstRun!.id;
  const columns: string[] = (
    await knex.raw(`select column_name from information_schema.columns where table_name = 'runs' and table_schema = current_schema()`)
  ).rows.map((r: { column_name: string }) => r.column_name);
  /** Adds `n` finished runs, copies of the bench's first run but for their id and times, spread over the last days; the ms it took. */
  const addRuns = async (n: number): Promise<number> => {
    const t0 = performance.now();
    const value = (c: string) =>
      ({
        id: `'run_' || md5(random()::text || g::text)`,
        status: `'success'`,
        created_at: `now() - g * interval '1 second'`,
        started_at: `now() - g * interval '1 second'`,
        finished_at: `now() - g * interval '1 second' + interval '100 milliseconds'`,
      })[c] ?? `t.${c}`;
    await knex.raw(
      `insert into runs (${columns.join(', ')}) select ${columns.map(value).join(', ')} from generate_series(1, ?) g, (select * from runs where id = ?) t`,
      [n, template],
    );
    await knex.raw('analyze runs');
    return performance.now() - t0;
  };
  const launchP50 = async (): Promise<number> => {
    const ms: number[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await launch();
      ms.push(r.ms);
      await untilDone(r.client, r.id);
    }
    return pct(ms, 50);
  };
  const rowsBefore = Number((await knex('runs').count('* as n'))[0].n);
  launchAt.push({ rows: rowsBefore, p50: await launchP50() });
  // 1M rows: one INSERT ... SELECT generate_series, 40 s and 800 MB on the 2-CPU machine (issue 33).
  for (const target of [10_000, 1_000_000]) {
    const have = Number((await knex('runs').count('* as n'))[0].n);
    const insertMs = await addRuns(target - have);
    launchAt.push({ rows: target, p50: await launchP50(), insertMs });
  }
  await knex.destroy();
}

const sandboxMode = (await org.client.get(`/api/runs/${firstRun!.id}`)).body.sandboxMode;
const rows: Row[] = [];
if (ackRun.length) rows.push(['launch ack p50 (ms)', pct(ackRun, 50), pct(ackBare, 50)], ['launch ack p95 (ms)', pct(ackRun, 95), pct(ackBare, 95)]);
if (e2eRun.length)
  rows.push(['POST to terminal p50 (ms)', pct(e2eRun, 50), pct(e2eBare, 50)], ['POST to terminal p95 (ms)', pct(e2eRun, 95), pct(e2eBare, 95)]);
for (const c of [10, 50, 200]) {
  const g = at(c);
  if (g) rows.push([`runs/s at ${c} concurrent`, g.service.rps, g.bare.rps]);
}
printTable(rows, 'bare');
const load = os
  .loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
console.log(
  `\nsandbox mode: ${sandboxMode}; bare = client.workflow.start (ack) and a workflow whose one activity spawns node -e 0 in ` +
    `a fresh sandbox (as many at once as the worker has run slots); load ${load}`,
);
if (timelines.length)
  printTimeline(timelineP50(timelines), 'where a sequential run goes (each moment p50 over the 25 runs; Temporal events from the workflow history)');

if (growth.length) {
  const growthRows = growth.flatMap((g) => [
    [`POST to terminal p50 at ${g.concurrency} (ms)`, g.service.p50, g.bare.p50],
    [`POST to terminal p95 at ${g.concurrency} (ms)`, g.service.p95, g.bare.p95],
    [`runs/s at ${g.concurrency} concurrent`, g.service.rps, g.bare.rps],
  ]) satisfies Row[];
  console.log(`\ngrowth with concurrency (each level: service, then bare; WORKER_MAX_CONCURRENT_RUNS=${SLOTS} on both sides, max_concurrent_per_org 1000)`);
  printTable(growthRows, 'bare');
  for (const [c, cpu] of Object.entries(cpuPerRun)) {
    const own = grouped ? 'each process with what it started (cpuacct groups), sandboxes included' : 'each process alone (/proc), sandboxes not included';
    console.log(`\nCPU per run at ${c} concurrent (ms; machine = every process on it and the kernel; ${own}; stack = their sum)`);
    printTable(
      Object.keys(cpu.service).map((k) => [k, cpu.service[k], cpu.bare[k]] as const),
      'bare',
    );
  }
}
if (launchAt.length) {
  console.log('\ngrowth with rows in `runs`: launch ack p50 (ms)');
  for (const l of launchAt)
    console.log(
      `${String(l.rows).padStart(8)} rows  ${l.p50.toFixed(1).padStart(8)}${l.insertMs ? `   (rows added in ${(l.insertMs / 1000).toFixed(1)} s)` : ''}`,
    );
}

const result = {
  when: new Date().toISOString(),
  machine: { cpus: os.cpus().length, node: process.version, load: os.loadavg().map((l) => Math.round(l * 100) / 100) },
  sandboxMode,
  phases: [...PHASES],
  workerRunSlots: SLOTS,
  maxConcurrentPerOrg: 1000,
  samples: { ack: ackRun.length, e2e: e2eRun.length },
  results: resultsOf(rows, 'bare'),
  timelineP50Ms: Object.fromEntries(timelineP50(timelines)),
  growth: {
    concurrency: growth.map((g) => ({
      concurrency: g.concurrency,
      runs: g.runs,
      service: {
        postToTerminalP50Ms: Math.round(g.service.p50 * 10) / 10,
        postToTerminalP95Ms: Math.round(g.service.p95 * 10) / 10,
        runsPerSecond: Math.round(g.service.rps * 10) / 10,
      },
      bare: {
        postToTerminalP50Ms: Math.round(g.bare.p50 * 10) / 10,
        postToTerminalP95Ms: Math.round(g.bare.p95 * 10) / 10,
        runsPerSecond: Math.round(g.bare.rps * 10) / 10,
      },
    })),
    launchAckP50ByRows: launchAt.map((l) => ({
      rows: l.rows,
      p50Ms: Math.round(l.p50 * 10) / 10,
      ...(l.insertMs ? { rowsAddedInMs: Math.round(l.insertMs) } : {}),
    })),
  },
  cpuMsPerRun: cpuPerRun,
  cpuSandboxesCounted: grouped,
};
writeResult('runs', result);

await connection.close();
await service.stop();
await model.stop();
await mochaGlobalTeardown();
process.exit(0);
