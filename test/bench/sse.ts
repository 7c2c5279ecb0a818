import { fork } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createKnex } from '../../shared/db/knex.ts';
import { appendRunLog } from '../../shared/runs/logs.ts';
import { mochaGlobalSetup, mochaGlobalTeardown } from '../setup/global.ts';
import { pct, printTable, type Row, resultsOf, say, writeResult } from './report.ts';
import { newKey, newOrg, startTestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';
import { stack } from '../support/stack.ts';
import { workerEnv } from '../support/worker.ts';

const SUBSCRIBERS = 1000;
/**
 * Each side first connects and closes this many clients, so the measured connects run on code
 * the JIT has compiled: the raw server, measured second in the same process, otherwise got the
 * service's warm-up of node:http for free (the service's first round measured about 1.5 times
 * its later ones).
 */
const WARM_CONNECTS = 1000;
/**
 * Connect rounds timed on each side (each 1000 clients, closed before the next round); the table
 * shows their median. A single round varied by a third from one bench run to the next (servers
 * and clients share this process and its garbage collector), more than the change it measured.
 */
const CONNECT_ROUNDS = 5;
const WARMUP = 5;
const PUBLISHES = 60;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Connects `n` clients to `url` and closes them once `open()` counts them, then waits until it counts none. */
async function warmUp(url: string, n: number, open: () => number): Promise<void> {
  const subs = new Subscribers();
  await subs.connect(url, n);
  subs.close();
  for (let waited = 0; open() > 0 && waited < 10_000; waited += 20) await sleep(20);
}

/**
 * CONNECT_ROUNDS rounds of SUBSCRIBERS connects by clients in a process of their own
 * (sse-clients.ts), after one round that warms that process; `open()` counts the server's streams.
 */
async function connectRoundsElsewhere(url: string, open: () => number): Promise<number[]> {
  const child = fork(path.join(import.meta.dirname, 'sse-clients.ts'), [url, String(SUBSCRIBERS), String(1 + CONNECT_ROUNDS)], {
    execArgv: ['--disable-warning=ExperimentalWarning'],
  });
  const times: number[] = [];
  child.on('message', async (m: { ms: number }) => {
    times.push(m.ms);
    for (let waited = 0; open() > 0 && waited < 10_000; waited += 20) await sleep(20);
    child.send('go');
  });
  const [code] = await once(child, 'exit');
  if (code !== 0 || times.length !== 1 + CONNECT_ROUNDS) throw new Error(`the connecting process ended with ${code} after ${times.length} rounds`);
  return times.slice(1);
}

/**
 * CONNECT_ROUNDS rounds of SUBSCRIBERS connects from this process after the warm-up; every round but the last is
 * closed again. Returns the last round's clients (for the publishes) and each round's time.
 */
async function connectRounds(url: string, open: () => number): Promise<{ subs: Subscribers; times: number[] }> {
  await warmUp(url, WARM_CONNECTS, open);
  const times: number[] = [];
  for (let round = 1; ; round++) {
    const subs = new Subscribers();
    times.push(await subs.connect(url, SUBSCRIBERS));
    if (round === CONNECT_ROUNDS) return { subs, times };
    subs.close();
    for (let waited = 0; open() > 0 && waited < 10_000; waited += 20) await sleep(20);
  }
}

/** 1000 streaming node:http clients; each parses frames and reports `bench-<i>` receipts. */
class Subscribers {
  private readonly reqs: http.ClientRequest[] = [];
  /** Receipt times of publish i, one per client. */
  private readonly receipts = new Map<number, number[]>();
  private waiting?: { i: number; resolve: () => void };

  async connect(url: string, n: number): Promise<number> {
    const t0 = performance.now();
    for (let done = 0; done < n; done += 100) {
      await Promise.all(Array.from({ length: Math.min(100, n - done) }, () => this.one(url)));
    }
    return performance.now() - t0;
  }

  private one(url: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = http.get(url, { agent: false }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`subscribe: ${res.statusCode}`));
        res.setEncoding('utf8');
        let buf = '';
        let opened = false;
        res.on('data', (chunk: string) => {
          buf += chunk;
          let end = buf.indexOf('\n\n');
          while (end !== -1) {
            this.frame(buf.slice(0, end));
            buf = buf.slice(end + 2);
            end = buf.indexOf('\n\n');
          }
          if (!opened) {
            opened = true;
            resolve();
          }
        });
        res.on('error', () => undefined);
      });
      req.on('error', reject);
      this.reqs.push(req);
    });
  }

  private frame(text: string): void {
    const at = performance.now();
    let event = '';
    let data = '';
    for (const line of text.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data = line.slice(6);
    }
    if (event !== 'run_log') return;
    const m = /^bench-(\d+)$/.exec(JSON.parse(data).message);
    if (!m) return;
    const i = Number(m[1]);
    const list = this.receipts.get(i) ?? [];
    list.push(at);
    this.receipts.set(i, list);
    if (this.waiting?.i === i && list.length >= this.reqs.length) this.waiting.resolve();
  }

  /** Resolves when every client has publish i (or after `ms`); returns the receipt times. */
  async received(i: number, ms = 10_000): Promise<number[]> {
    if ((this.receipts.get(i)?.length ?? 0) < this.reqs.length) {
      await Promise.race([new Promise<void>((resolve) => (this.waiting = { i, resolve })), sleep(ms)]);
      this.waiting = undefined;
    }
    return this.receipts.get(i) ?? [];
  }

  close(): void {
    for (const r of this.reqs) r.destroy();
  }
}

interface Measure {
  latencies: number[];
  lastPerPublish: number[];
  publishCall: number[];
  missing: number;
}

async function measure(subs: Subscribers, publish: (i: number) => Promise<void>): Promise<Measure> {
  const m: Measure = { latencies: [], lastPerPublish: [], publishCall: [], missing: 0 };
  for (let i = 0; i < WARMUP + PUBLISHES; i++) {
    const t0 = performance.now();
    await publish(i);
    const called = performance.now() - t0;
    const times = await subs.received(i);
    if (i < WARMUP) continue;
    m.publishCall.push(called);
    m.missing += SUBSCRIBERS - times.length;
    const lat = times.map((t) => t - t0);
    m.latencies.push(...lat);
    m.lastPerPublish.push(Math.max(...lat));
    await sleep(20);
  }
  return m;
}

say('starting the stack (embedded Postgres, Temporal dev server)...');
await mochaGlobalSetup();
// Every subscriber uses one key: the per-identity cap (DESIGN.md 5, default 100) is raised to hold them.
const api = await startTestApi(workerEnv({ LOG_LEVEL: 'error', REALTIME_MAX_STREAMS_PER_IDENTITY: String(Math.max(SUBSCRIBERS, WARM_CONNECTS)) }));
const knex = createKnex(stack().databaseUrl, { min: 1, max: 2 });
const org = await newOrg(api, 'bench-sse');
await importAgent(org.client, { name: '@bench/sse' });
// No worker runs: the run stays pending and carries the log entries.
const launched = await org.client.post('/api/agents/@bench/sse/run', { input: {} });
if (launched.status !== 201) throw new Error(`launch failed: ${launched.status} ${launched.text}`);
const runId: string = launched.body.id;
const key = await newKey(api, org.client, { name: 'bench sse' });

say(`1/2 service: ${SUBSCRIBERS} subscribers on /api/realtime/runs, ${PUBLISHES} log entries written with appendRunLog...`);
const serviceUrl = `${api.url.replace('localhost', '127.0.0.1')}/api/realtime/runs?token=${key.key}&channels=run_log`;
const serviceElsewhere = await connectRoundsElsewhere(serviceUrl, () => api.realtimeStreams());
const { subs: serviceSubs, times: serviceConnects } = await connectRounds(serviceUrl, () => api.realtimeStreams());
if (api.realtimeStreams() !== SUBSCRIBERS) throw new Error(`expected ${SUBSCRIBERS} streams, the API holds ${api.realtimeStreams()}`);
const service = await measure(serviceSubs, async (i) => {
  await appendRunLog(knex, runId, { level: 'info', type: 'bench', message: `bench-${i}` });
});
serviceSubs.close();

say(`2/2 bare: a raw node:http SSE writer fed in-process, the same ${SUBSCRIBERS} clients...`);
const open = new Set<http.ServerResponse>();
let frameNo = 0;
const raw = http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache' });
  res.write(`event: ping\nid: raw:0\ndata: {}\n\n`);
  open.add(res);
  req.on('close', () => open.delete(res));
});
await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
const rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/`;
const rawElsewhere = await connectRoundsElsewhere(rawUrl, () => open.size);
const { subs: rawSubs, times: rawConnects } = await connectRounds(rawUrl, () => open.size);
const bare = await measure(rawSubs, async (i) => {
  // The same frame shape the service sends: a logDto with runId.
  const data = JSON.stringify({
    object: 'run_log',
    id: i + 1,
    seq: i + 1,
    runId,
    level: 'info',
    type: 'progress',
    event: 'progress',
    kind: 'bench',
    message: `bench-${i}`,
    createdAt: new Date().toISOString(),
  });
  frameNo++;
  for (const res of open) res.write(`event: run_log\nid: raw:${frameNo}\ndata: ${data}\n\n`);
});
rawSubs.close();
raw.closeAllConnections();
await new Promise((r) => raw.close(r));

const rows = [
  ['receipt latency p50 (ms)', pct(service.latencies, 50), pct(bare.latencies, 50)],
  ['receipt latency p99 (ms)', pct(service.latencies, 99), pct(bare.latencies, 99)],
  ['last of 1000 p50 (ms)', pct(service.lastPerPublish, 50), pct(bare.lastPerPublish, 50)],
  ['publish call p50 (ms)', pct(service.publishCall, 50), pct(bare.publishCall, 50)],
  [`connect 1000, clients elsewhere, p50 of ${CONNECT_ROUNDS} (ms)`, pct(serviceElsewhere, 50), pct(rawElsewhere, 50)],
  [`connect 1000, clients in here, p50 of ${CONNECT_ROUNDS} (ms)`, pct(serviceConnects, 50), pct(rawConnects, 50)],
] satisfies Row[];
printTable(rows, 'bare', 2);
const list = (times: number[]) => times.map((t) => t.toFixed(0)).join(', ');
console.log(
  `\n${SUBSCRIBERS} subscribers, ${PUBLISHES} publishes (after ${WARMUP} warm-up); missing frames: service ${service.missing}, bare ${bare.missing}. ` +
    `Connects timed after ${WARM_CONNECTS} warm-up connects on each side, ${CONNECT_ROUNDS} rounds each; clients elsewhere ` +
    `(a process of their own): service ${list(serviceElsewhere)}, bare ${list(rawElsewhere)} ms; clients in this process: ` +
    `service ${list(serviceConnects)}, bare ${list(rawConnects)} ms. ` +
    'Service = appendRunLog (transaction + NOTIFY) -> LISTEN -> one row load -> fan-out; bare = res.write to each client. Servers ' +
    'and clients share this process.',
);

const result = {
  when: new Date().toISOString(),
  machine: { cpus: os.cpus().length, node: process.version },
  subscribers: SUBSCRIBERS,
  warmConnects: WARM_CONNECTS,
  connectRounds: { elsewhere: { service: serviceElsewhere, bare: rawElsewhere }, inHere: { service: serviceConnects, bare: rawConnects } },
  publishes: PUBLISHES,
  missing: { service: service.missing, bare: bare.missing },
  results: resultsOf(rows, 'bare', 2),
};
writeResult('sse', result);

await knex.destroy();
await api.close();
await mochaGlobalTeardown();
process.exit(0);
