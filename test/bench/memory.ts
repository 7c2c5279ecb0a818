// Memory (issue 18): the resident memory of the API and a worker, idle right after start and idle
// again after some runs, against the goal of 250 MB for the pair; and the memory of a running
// sandbox (bwrap and the agent runtime's node, summed per run) against 80 MB. Read from
// /proc/<pid>/status (VmRSS) of the processes as production runs them (their entry points apply
// their own memory settings, shared/stack/tuned-process.ts).
import fs from 'node:fs';
import { mochaGlobalSetup, mochaGlobalTeardown } from '../setup/global.ts';
import { newOrg } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { startServiceProcesses } from './processes.ts';
import { pssMb, rssMb } from './proc-memory.ts';
import { printTable, type Row, resultsOf, say, writeResult } from './report.ts';

const SANDBOXES = 5;
const HOLD_MS = 20_000;

/** The parent of a process, 0 when it is gone. */
function parentOf(pid: number): number {
  try {
    // `pid (comm) state ppid ...`; comm may hold spaces, the last `)` ends it.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

function descendsFrom(pid: number, ancestor: number): boolean {
  for (let p = parentOf(pid); p > 1; p = parentOf(p)) if (p === ancestor) return true;
  return false;
}

/** Processes of this worker's sandboxes (the warm pool's too): the bwrap wrapper and the runtime, both naming its entry point. */
function sandboxPids(workerPid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('/runtime/main.mjs');
      } catch {
        return false;
      }
    })
    .map(Number)
    .filter((pid) => descendsFrom(pid, workerPid));
}

function comm(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

say('starting the stack (embedded Postgres, Temporal dev server), then the API and one worker...');
await mochaGlobalSetup();
const model = await new FakeModel().start();
// A first start and stop leaves what a deployment has from its second start on: the workflow
// bundle and Node's compile cache on disk (workers/workflow-bundle.ts, shared/stack/tuned-process.ts).
await (await startServiceProcesses({})).stop();
// With the benchmark's bare Temporal worker (test/bench/bare-worker.ts: one workflow, one
// activity, the same SDK) idle beside them, for scale: it bundles its workflow in its own
// process (webpack stays resident), which our worker no longer does.
const service = await startServiceProcesses({}, ['test/bench/bare-worker.ts']);
const api = { url: service.apiUrl };
const [apiPid, workerPid, bareWorkerPid] = service.pids;
await settle(10_000);
const cold = { api: rssMb(apiPid), worker: rssMb(workerPid) };
const bareWorker = rssMb(bareWorkerPid);

const org = await newOrg(api, 'bench-memory');
await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
await importAgent(org.client, { name: '@bench/mem', input: { type: 'object' } });
say('five runs one after the other, then idle again...');
model.script('quick', [() => toolCall('output', {})]);
for (let i = 0; i < 5; i++) {
  const run = await org.client.post('/api/agents/@bench/mem/run', { input: { marker: 'quick' } });
  await org.client.get(`/api/runs/${run.body.id}?wait=30`);
}
await settle(10_000);
const warm = { api: rssMb(apiPid), worker: rssMb(workerPid) };
const warmPss = pssMb(apiPid) + pssMb(workerPid);
// Helper processes the pair started (the worker's warm sandboxes, waiting for a run): the goal counts them too.
const warmHelpers = sandboxPids(workerPid).reduce((n, pid) => n + rssMb(pid), 0);

say(`${SANDBOXES} runs held open (the model answers after ${HOLD_MS / 1000} s)...`);
model.script('held', [() => new Promise((r) => setTimeout(() => r(toolCall('output', {})), HOLD_MS))]);
const held = await Promise.all(Array.from({ length: SANDBOXES }, () => org.client.post('/api/agents/@bench/mem/run', { input: { marker: 'held' } })));
for (let i = 0; i < 100 && model.requests.filter((r) => JSON.stringify(r.body).includes('held')).length < SANDBOXES; i++) await settle(100);
await settle(1000); // each runtime waits for its model answer
// Per sandbox: over every sandbox there is, the warm pool's (SANDBOX_WARM_POOL, waiting for a
// run) with the running ones; a sandbox is one runtime node and its bwrap wrapper.
const pids = sandboxPids(workerPid);
const runtimes = pids.filter((pid) => comm(pid) !== 'bwrap').length;
const perSandbox = pids.reduce((n, pid) => n + rssMb(pid), 0) / Math.max(runtimes, 1);
const workerBusy = rssMb(workerPid);
for (const r of held) await org.client.get(`/api/runs/${r.body.id}?wait=55`);

const rows: Row[] = [
  ['idle API + worker, cold (MB)', cold.api + cold.worker, 250],
  ['idle API + worker, warm (MB)', warm.api + warm.worker, 250],
  ['  API warm (MB)', warm.api, 250],
  ['  worker warm (MB)', warm.worker, 250],
  ['idle API + worker + warm sandboxes, warm (MB)', warm.api + warm.worker + warmHelpers, 250],
  ['idle API + worker, warm, proportional (Pss, MB)', warmPss, 250],
  ['per running sandbox (MB)', perSandbox, 80],
];
printTable(rows, 'goal');
console.log(
  `\ngoal = issue 18's target (250 MB for the idle pair, 80 MB per sandbox). Worker with ${SANDBOXES} sandboxes running: ${Math.round(workerBusy)} ` +
    `MB; sandboxes counted: ${runtimes} (${SANDBOXES} running, the rest warm).`,
);
console.log(
  `For scale: the bare Temporal worker (one workflow, one activity, the same SDK, bundled in its own process) idles at ${Math.round(bareWorker)} MB.`,
);
writeResult('memory', {
  when: new Date().toISOString(),
  results: resultsOf(rows, 'goal'),
  workerWithSandboxesMb: Math.round(workerBusy),
  sandboxes: runtimes,
  bareTemporalWorkerIdleMb: Math.round(bareWorker),
});

await service.stop();
await model.stop();
await mochaGlobalTeardown();
process.exit(0);
