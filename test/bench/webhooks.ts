// Webhook delivery: run-terminal-to-receiver latency (the worker that wrote the status makes the
// first attempt, activities/webhooks/first-attempt.ts) and deliveries per second of a burst
// (publishEvent from outside a worker: the event stored, handed to the webhook's outbox, first
// attempts in batches; three bursts, the median), against raw undici POSTs carrying the same
// HMAC to the same HTTPS receiver. API and worker run as processes of their own. Writes JSON
// under test/bench/results/.
import fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { Agent, request } from 'undici';
import { deterministicEventId, publishEvent } from '../../shared/events/publish.ts';
import { createKnex } from '../../shared/db/knex.ts';
import { signedHeaders } from '../../shared/webhooks/signature.ts';
import { mochaGlobalSetup, mochaGlobalTeardown } from '../setup/global.ts';
import { pct, printTable, type Row, resultsOf, say, writeResult } from './report.ts';
import { startServiceProcesses } from './processes.ts';
import { newKey, newOrg } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { HttpsReceiver } from '../support/receiver.ts';
import { stack } from '../support/stack.ts';

const RUNS = 25;
const BURST = 200;
/** Bursts measured, each followed by its raw burst (the median of each is reported): one alone swung from 0.23x to 0.53x on a busy machine. */
const BURSTS = 3;

say('starting the stack...');
await mochaGlobalSetup();
const receiver = await new HttpsReceiver().start();
const model = await new FakeModel().start();
model.setFallback(() => toolCall('output', { ok: true }));
const service = await startServiceProcesses({
  NODE_EXTRA_CA_CERTS: receiver.caFile,
  PLATFORM_RUN_LIMITS: JSON.stringify({ per_org_global_rate_per_min: 100000 }),
});
const api = { url: service.apiUrl };
const knex = createKnex(stack().databaseUrl, { min: 0, max: 4 });
const connection = await Connection.connect({ address: stack().temporalAddress });
const temporal = new Client({ connection });

const org = await newOrg(api, 'bench');
await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
await importAgent(org.client, { name: '@bench/hooked' });
const hook = await org.client.post('/api/webhooks', { level: 'space', spaceId: org.defaultSpaceId, url: receiver.url('/bench'), events: ['run.success'] });
if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${hook.text}`);
const secret: string = hook.body.secret;

const arrivals = new Map<string, number>();
receiver.respond((r) => {
  arrivals.set(String(r.headers['webhook-id']), r.at);
  return 200;
});
async function arrival(id: string, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (!arrivals.has(id)) {
    if (Date.now() > deadline) throw new Error(`no delivery of ${id}`);
    await new Promise((r) => setTimeout(r, 2));
  }
  return arrivals.get(id)!;
}

say(`1/2 run terminal to receiver (${RUNS} runs) and raw signed POSTs...`);
const viaService: number[] = [];
const viaRaw: number[] = [];
const ca = [fs.readFileSync(receiver.caFile, 'utf8')];
const raw = new Agent({ connect: { ca } });
async function rawPost(id: string, dispatcher = raw): Promise<void> {
  const body = JSON.stringify({ id, object: 'event', type: 'run.success', data: { object: { object: 'run', id } } });
  const res = await request(receiver.url('/raw'), { method: 'POST', headers: signedHeaders([secret], id, 1, body), body, dispatcher });
  await res.body.dump();
}
let launcher = org.client;
for (let i = 0; i < RUNS + 3; i++) {
  // The launch route allows 20 a minute per identity (SPEC 8.2): a fresh key every 18 runs.
  if (i % 18 === 0) launcher = (await newKey(api, org.client, { name: `bench-${i}` })).client;
  const run = await launcher.post('/api/agents/@bench/hooked/run', { input: {} });
  if (run.status !== 201) throw new Error(`launch: ${run.status} ${run.text}`);
  const done = await launcher.get(`/api/runs/${run.body.id}?wait=30`);
  const eventId = deterministicEventId(`${run.body.id}:run.success`);
  if (done.body.status !== 'success') throw new Error(`bench run ended ${done.body.status}: ${done.body.error}`);
  const at = await arrival(eventId);
  const rawId = `raw-${i}`;
  const t0 = Date.now();
  await rawPost(rawId);
  if (i >= 3) {
    viaService.push(at - new Date(done.body.finishedAt).getTime());
    viaRaw.push((await arrival(rawId)) - t0);
  }
}

say(`2/2 deliveries per second (${BURSTS} times ${BURST} events at once, each followed by ${BURST} raw POSTs, 50 at a time)...`);
const servicePerSecond: number[] = [];
const rawPerSecond: number[] = [];
for (let round = 0; round < BURSTS; round++) {
  let t0 = Date.now();
  const burstIds = Array.from({ length: BURST }, (_, i) => `evt_burst${round}${String(i).padStart(18, '0')}`);
  await Promise.all(
    burstIds.map((id) =>
      publishEvent(knex, temporal, {
        id,
        type: 'run.success',
        orgId: org.orgId,
        spaceId: org.defaultSpaceId,
        packageId: '@bench/hooked',
        object: { object: 'run', id },
        occurredAt: new Date(),
      }),
    ),
  );
  await Promise.all(burstIds.map((id) => arrival(id, 120_000)));
  servicePerSecond.push(BURST / ((Date.now() - t0) / 1000));
  // A fresh dispatcher for each raw burst: it opens its connections, as the first burst did
  // before there were several (kept-alive ones make raw POSTs 2 to 5 times faster).
  const burstRaw = new Agent({ connect: { ca } });
  t0 = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < BURST) await rawPost(`rawburst-${round}-${next++}`, burstRaw);
    }),
  );
  rawPerSecond.push(BURST / ((Date.now() - t0) / 1000));
  await burstRaw.close();
}

const rows = [
  ['terminal to receiver p50 (ms)', pct(viaService, 50), pct(viaRaw, 50)],
  ['terminal to receiver p95 (ms)', pct(viaService, 95), pct(viaRaw, 95)],
  ['deliveries per second (median burst)', pct(servicePerSecond, 50), pct(rawPerSecond, 50)],
] satisfies Row[];
printTable(rows, 'raw POST');
console.log(
  '\nservice: terminal to receiver = the first attempt made by the worker that wrote the status (egress check, signing, recorded ' +
    'attempt); deliveries per second = publishEvent to the webhook outbox (event stored, signal, batched first attempts); raw ' +
    '= undici POST with the same HMAC',
);
const result = {
  when: new Date().toISOString(),
  samples: { runs: viaService.length, burst: BURST, bursts: BURSTS },
  bursts: { service: servicePerSecond.map((n) => Math.round(n)), raw: rawPerSecond.map((n) => Math.round(n)) },
  results: resultsOf(rows, 'raw'),
};
writeResult('webhooks', result);

await raw.close();
await knex.destroy();
await connection.close();
await service.stop();
await model.stop();
await receiver.stop();
await mochaGlobalTeardown();
process.exit(0);
