
import { Client, Connection } from '@temporalio/client';
import { mochaGlobalSetup, mochaGlobalTeardown } from '../setup/global.ts';
import { pct, printTable, type Row, resultsOf, say, writeResult } from './report.ts';
import { startServiceProcesses } from './processes.ts';
import { type Client as Http, newKey, newOrg } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { stack } from '../support/stack.ts';


say('starting the stack (embedded Postgres, Temporal dev server)...');
await mochaGlobalSetup();
const model = await new FakeModel().start();
model.setFallback(() => toolCall('output', { ok: true }));
// API, agent worker and baseline worker run as processes of their own, as in production, so
// their event loops do not share this one. Launch limits are raised so the benchmark measures
// the path, not the organization caps.
const limits = { PLATFORM_RUN_LIMITS: JSON.stringify({ max_concurrent_per_org: 1000, per_org_global_rate_per_min: 100000 }) };
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
async function clientFor(slot: number): Promise<Http> {
  let s = slots.get(slot);
  if (!s || s.used >= 18) {
    s = { client: (await newKey(api, org.client, { name: `bench-${keyCount++}` })).client, used: 0 };
    slots.set(slot, s);
  }
  s.used++;
  return s.client;
}
async function launch(slot = 0): Promise<{ id: string; ms: number; client: Http }> {
  const client = await clientFor(slot);
  const t0 = performance.now();
  const res = await client.post('/api/agents/@bench/trivial/run', { input: {} });
  const ms = performance.now() - t0;
  if (res.status !== 201) throw new Error(`launch failed: ${res.status} ${res.text}`);
  return { id: res.body.id, ms, client };
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
for (let i = 0; i < 3; i++) {
  const r = await launch();
  await untilDone(r.client, r.id);
  await (await bareStart('bareSandboxWorkflow')).result();
}

say('1/3 launch acknowledgement (40 each, one at a time, each run finished before the next)...');
const ackRun: number[] = [];
const ackBare: number[] = [];
let firstRun: { id: string; client: Http } | undefined;
for (let i = 0; i < 40; i++) {
  const r = await launch();
  ackRun.push(r.ms);
  firstRun ??= r;
  await untilDone(r.client, r.id);
  const t0 = performance.now();
  const handle = await bareStart('bareSandboxWorkflow');
  ackBare.push(performance.now() - t0);
  await handle.result();
}

say('2/3 POST to terminal (25 sequential)...');
const e2eRun: number[] = [];
const e2eBare: number[] = [];
for (let i = 0; i < 25; i++) {
  let t0 = performance.now();
  const r = await launch();
  const status = await untilDone(r.client, r.id);
  if (status !== 'success') throw new Error(`bench run ended ${status}`);
  e2eRun.push(performance.now() - t0);
  t0 = performance.now();
  await (await bareStart('bareSandboxWorkflow')).result();
  e2eBare.push(performance.now() - t0);
}

say('3/3 throughput at 10 and 50 concurrent launches...');
async function throughput(concurrency: number, total: number, one: (slot: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, slot) => {
      while (next < total) {
        next++;
        await one(slot);
      }
    }),
  );
  return total / ((performance.now() - t0) / 1000);
}
const runOne = async (slot: number) => {
  const r = await launch(slot);
  await untilDone(r.client, r.id);
};
const bareOne = async () => {
  await (await bareStart('bareSandboxWorkflow')).result();
};
const tput = {
  run10: await throughput(10, 40, runOne),
  bare10: await throughput(10, 40, bareOne),
  run50: await throughput(50, 100, runOne),
  bare50: await throughput(50, 100, bareOne),
};

const sandboxMode = (await org.client.get(`/api/runs/${firstRun!.id}`)).body.sandboxMode;
const rows = [
  ['launch ack p50 (ms)', pct(ackRun, 50), pct(ackBare, 50)],
  ['launch ack p95 (ms)', pct(ackRun, 95), pct(ackBare, 95)],
  ['POST to terminal p50 (ms)', pct(e2eRun, 50), pct(e2eBare, 50)],
  ['POST to terminal p95 (ms)', pct(e2eRun, 95), pct(e2eBare, 95)],
  ['runs/s at 10 concurrent', tput.run10, tput.bare10],
  ['runs/s at 50 concurrent', tput.run50, tput.bare50],
] satisfies Row[];
printTable(rows, 'bare');
console.log(`\nsandbox mode: ${sandboxMode}; bare = client.workflow.start (ack) and a workflow whose one activity spawns node -e 0 in the same sandbox`);

const result = {
  when: new Date().toISOString(),
  machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
  sandboxMode,
  samples: { ack: ackRun.length, e2e: e2eRun.length },
  results: resultsOf(rows, 'bare'),
};
writeResult('runs', result);

await connection.close();
await service.stop();
await model.stop();
await mochaGlobalTeardown();
process.exit(0);
