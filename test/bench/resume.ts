// Runs that survive their worker (issue 14): how long a run stands still after its worker is
// SIGKILLed (until the resumed attempt sends its first new model request; the heartbeat timeout
// of 10 s dominates), and what the journal costs on POST to terminal of a three-turn run
// (log, note, output) against the same run with RUN_CHECKPOINTS=false. API and workers run as
// processes of their own. Writes JSON under test/bench/results/.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mochaGlobalSetup, mochaGlobalTeardown } from '../setup/global.ts';
import { type Client, newKey, newOrg } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { startServiceProcesses, startWorker } from './processes.ts';
import { pct, printTable, type Row, resultsOf, say, writeResult } from './report.ts';

const KILLS = 5;
const RUNS = 20;

say('starting the stack...');
await mochaGlobalSetup();
const model = await new FakeModel().start();
const limits = { PLATFORM_RUN_LIMITS: JSON.stringify({ max_concurrent_per_org: 1000, per_org_global_rate_per_min: 100000 }) };
const service = await startServiceProcesses(limits, [], ['api/main.ts']);
// A failure stops what the benchmark started before it exits (workers die with this process).
process.on('uncaughtException', async (err) => {
  console.error(err);
  await service.stop();
  await mochaGlobalTeardown();
  process.exit(1);
});
const api = { url: service.apiUrl };
const org = await newOrg(api, 'bench');
await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
await importAgent(org.client, { name: '@bench/turns', timeout: 600, runtimeTools: ['log', 'note'], input: { type: 'object' } });

// SPEC 8.2 allows 20 launches a minute per identity: a fresh key every 15.
let launcher: { client: Client; used: number } | undefined;
async function launch(input: Record<string, unknown>): Promise<string> {
  if (!launcher || launcher.used >= 15) launcher = { client: (await newKey(api, org.client, { name: `bench-${Date.now()}` })).client, used: 0 };
  launcher.used++;
  const res = await launcher.client.post('/api/agents/@bench/turns/run', { input });
  if (res.status !== 201) throw new Error(`launch failed: ${res.status} ${res.text}`);
  return res.body.id;
}

async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  await once(child, 'exit');
}

async function finished(id: string): Promise<void> {
  for (;;) {
    const res = await org.client.get(`/api/runs/${id}?wait=55`);
    if (res.body.status === 'success') return;
    if (res.body.status !== 'pending' && res.body.status !== 'running') throw new Error(`bench run ended ${res.body.status}: ${res.body.error}`);
  }
}

say(`1/2 resume after SIGKILL (${KILLS} kills)...`);
const resumeMs: number[] = [];
let current = await startWorker(limits);
for (let i = 0; i < KILLS; i++) {
  const marker = `kill-${i}`;
  let cutOff!: () => void;
  const waiting = new Promise<void>((r) => {
    cutOff = r;
  });
  let resumedAt = 0;
  let resumed!: () => void;
  const progress = new Promise<void>((r) => {
    resumed = r;
  });
  let turn2 = 0;
  model.script(marker, [
    () => toolCall('log', { level: 'info', message: 'turn one' }),
    () => {
      if (++turn2 === 1) {
        cutOff();
        return new Promise(() => {}); // the worker dies while waiting
      }
      resumedAt = performance.now();
      resumed();
      return toolCall('output', {});
    },
  ]);
  const id = await launch({ marker });
  await waiting;
  const next = await startWorker(limits); // ready and polling before the kill
  const killedAt = performance.now();
  await stop(current, 'SIGKILL');
  await progress;
  resumeMs.push(resumedAt - killedAt);
  await finished(id);
  current = next;
}
await stop(current);

say(`2/2 POST to terminal of a 3-turn run, journal on and off (${RUNS} each, after 3 warm-ups)...`);
model.setFallback((req) => {
  const turn = req.body.messages.filter((m: { role: string }) => m.role === 'assistant').length;
  if (turn === 0) return toolCall('log', { level: 'info', message: 'turn one' });
  if (turn === 1) return toolCall('note', { content: 'turn two' });
  return toolCall('output', {});
});
async function postToTerminal(checkpoints: boolean): Promise<number[]> {
  const worker = await startWorker({ ...limits, RUN_CHECKPOINTS: String(checkpoints) });
  const times: number[] = [];
  for (let i = 0; i < RUNS + 3; i++) {
    const t0 = performance.now();
    await finished(await launch({ i }));
    if (i >= 3) times.push(performance.now() - t0);
  }
  await stop(worker);
  return times;
}
const withJournal = await postToTerminal(true);
const withoutJournal = await postToTerminal(false);

const rows = [
  ['SIGKILL to resumed progress p50 (ms)', pct(resumeMs, 50), 10_000],
  ['SIGKILL to resumed progress max (ms)', Math.max(...resumeMs), 10_000],
] satisfies Row[];
const cost = [
  ['3-turn POST to terminal p50 (ms)', pct(withJournal, 50), pct(withoutJournal, 50)],
  ['3-turn POST to terminal p95 (ms)', pct(withJournal, 95), pct(withoutJournal, 95)],
] satisfies Row[];
printTable(rows, 'heartbeat');
printTable(cost, 'off');
console.log('\nheartbeat = the heartbeat timeout (10 s) after which Temporal gives the run to another worker; off = RUN_CHECKPOINTS=false');

writeResult('resume', {
  when: new Date().toISOString(),
  machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
  samples: { kills: resumeMs.length, runs: RUNS },
  resumeMs: resumeMs.map(Math.round),
  results: { ...resultsOf(rows, 'heartbeat'), ...resultsOf(cost, 'checkpointsOff') },
});

await service.stop();
await model.stop();
await mochaGlobalTeardown();
process.exit(0);
