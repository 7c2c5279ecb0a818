// POST to terminal as a user sees it (issue 33): `npm start` as the README says (embedded
// defaults in a fresh DATA_DIR under the temporary folder, ports of its own), the first owner
// bootstrapped, the instance default model (MODEL_*) a local scripted one that answers twice (a
// call of `output`, then a final message, should the runtime ask again), an API key, and runs
// launched one at a time, each timed from its POST to the `?wait=` answer. The baseline, in the
// same run and interleaved: a bare Temporal workflow on the same Temporal server whose one
// activity spawns `node -e 0` in a fresh sandbox (test/bench/bare-worker.ts), from
// `workflow.start` to its result. Then where a run's time goes (run-timeline.ts). run.ts measures
// the same path on the test stack, with a model that answers once; docs/performance.md says why
// the two figures differ.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { Client as Http } from '../support/api.ts';
import { embeddedStartEnv } from '../support/embedded-start.ts';
import { FakeModel, textAnswer, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { pct, printTable, type Row, resultsOf, say, writeResult } from './report.ts';
import { printTimeline, type RunTimeline, runTimeline, timelineP50 } from './run-timeline.ts';

const RUNS = Number(process.env.BENCH_USER_RUNS ?? 30);
const WARMUP = 3;

const model = await new FakeModel().start();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'user-run-'));
const bootstrapToken = randomBytes(16).toString('hex');
const { env, port } = await embeddedStartEnv(dataDir, {
  extra: {
    BOOTSTRAP_TOKEN: bootstrapToken,
    MODEL_PROVIDER: 'openai-compatible',
    MODEL_BASE_URL: model.url,
    MODEL_NAME: 'scripted',
    MODEL_API_KEY: 'local',
  },
  drop: ['LOG_LEVEL', 'MODULES', 'PLATFORM_RUN_LIMITS'],
});

say(`npm start in ${dataDir} (API :${port})...`);
const stack = spawn('npm', ['start'], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
let output = '';
stack.stdout!.on('data', (d: Buffer) => {
  output += d.toString();
});
const stackExited = new Promise<void>((resolve) => stack.once('exit', () => resolve()));
let bare: ChildProcess | undefined;

async function stopAll(): Promise<void> {
  bare?.kill('SIGTERM');
  if (stack.exitCode === null) {
    process.kill(-stack.pid!, 'SIGTERM'); // start.ts stops the API and worker, then Temporal, then Postgres
    await stackExited;
  }
  await model.stop();
  // As root the Postgres data lives beside the shared temporary folders, linked from DATA_DIR.
  const pg = path.join(dataDir, 'pg');
  try {
    if (fs.lstatSync(pg).isSymbolicLink()) fs.rmSync(fs.realpathSync(pg), { recursive: true, force: true });
  } catch {}
  fs.rmSync(dataDir, { recursive: true, force: true });
}
process.on('uncaughtException', async (err) => {
  console.error(err);
  await stopAll();
  process.exit(1);
});

const deadline = Date.now() + 300_000;
while (!output.includes('Ready.')) {
  if (stack.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not get ready:\n${output}`);
  await new Promise((r) => setTimeout(r, 100));
}
const temporalAddress = /frontend (\S+?),/.exec(output)?.[1];
if (!temporalAddress) throw new Error(`no Temporal address in npm start's output:\n${output}`);
const apiUrl = `http://127.0.0.1:${port}`;

// The first owner (an organization with its default space), then an API key of theirs, as the README says.
const owner = new Http(apiUrl);
const redeemed = await owner.post('/api/auth/bootstrap/redeem', {
  token: bootstrapToken,
  email: 'bench-owner@example.com',
  password: 'bench-owner-password',
  name: 'Bench',
});
if (redeemed.status !== 201 && redeemed.status !== 200) throw new Error(`bootstrap: ${redeemed.status} ${redeemed.text}`);
const org = redeemed.body.organization as { id: string; defaultSpaceId: string };
const session = owner.with({ 'X-Org-Id': org.id, 'X-Space-Id': org.defaultSpaceId });
await importAgent(session, {
  name: '@bench/answer',
  input: { type: 'object', properties: { tag: { type: 'string' } } },
  output: { type: 'object', properties: { ok: { type: 'boolean' } } },
});

// SPEC 8.2 allows 20 launches a minute per API key: a fresh key every 15 launches.
let launcher: { client: Http; used: number } | undefined;
async function key(): Promise<Http> {
  if (!launcher || launcher.used >= 15) {
    const res = await session.post('/api/api-keys', { name: `bench-${randomBytes(3).toString('hex')}` });
    if (res.status !== 201) throw new Error(`key: ${res.status} ${res.text}`);
    launcher = { client: new Http(apiUrl, { authorization: `Bearer ${res.body.key}` }), used: 0 };
  }
  launcher.used++;
  return launcher.client;
}

/** When the model heard each request of a run, by its tag (epoch ms). */
const modelHeard = new Map<string, number[]>();
async function oneRun(): Promise<{ ms: number; id: string; client: { sentAt: number; ackAt: number; answeredAt: number }; tag: string }> {
  const client = await key();
  const tag = `t${randomBytes(6).toString('hex')}`;
  const heard = (answer: unknown) => () => {
    modelHeard.set(tag, [...(modelHeard.get(tag) ?? []), Date.now()]);
    return answer;
  };
  model.script(tag, [heard(toolCall('output', { ok: true })), heard(textAnswer('Done.'))]);
  const t0 = performance.now();
  const sentAt = Date.now();
  const res = await client.post('/api/agents/@bench/answer/run', { input: { tag } });
  const ackAt = Date.now();
  if (res.status !== 201) throw new Error(`launch: ${res.status} ${res.text}`);
  let status = res.body.status;
  while (status === 'pending' || status === 'running') status = (await client.get(`/api/runs/${res.body.id}?wait=true`)).body.status;
  const ms = performance.now() - t0;
  if (status !== 'success') throw new Error(`run ${res.body.id} ended ${status}`);
  return { ms, id: res.body.id, client: { sentAt, ackAt, answeredAt: Date.now() }, tag };
}

// The bare baseline on the same Temporal server, as run.ts's: a process of its own.
const secretsKey = fs.readFileSync(path.join(dataDir, 'secrets.key'), 'utf8').trim();
bare = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', path.join(PROJECT_ROOT, 'test', 'bench', 'bare-worker.ts')], {
  env: { ...env, TEMPORAL_ADDRESS: temporalAddress, SECRETS_KEY: secretsKey, LOG_LEVEL: 'error' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const connection = await Connection.connect({ address: temporalAddress });
const temporal = new TemporalClient({ connection });
let bareN = 0;
async function oneBare(): Promise<number> {
  const t0 = performance.now();
  await (await temporal.workflow.start('bareSandboxWorkflow', { taskQueue: 'bench', workflowId: `bench-${bareN++}-${Date.now()}` })).result();
  return performance.now() - t0;
}

say(`${WARMUP} warm-up runs, then ${RUNS} runs one at a time, each followed by a bare workflow...`);
for (let i = 0; i < WARMUP; i++) {
  await oneRun();
  await oneBare();
}
const runs: Awaited<ReturnType<typeof oneRun>>[] = [];
const bareMs: number[] = [];
for (let i = 0; i < RUNS; i++) {
  runs.push(await oneRun());
  bareMs.push(await oneBare());
}

const timelines: RunTimeline[] = [];
for (const r of runs) {
  const heard = modelHeard.get(r.tag) ?? [];
  timelines.push(await runTimeline(session, temporal, r.id, r.client, Object.fromEntries(heard.map((t, i) => [`model request ${i + 1}`, t]))));
}
const modelCalls = runs.map((r) => modelHeard.get(r.tag)?.length ?? 0);

const userMs = runs.map((r) => r.ms);
const rows = [
  ['POST to terminal p50 (ms)', pct(userMs, 50), pct(bareMs, 50)],
  ['POST to terminal p95 (ms)', pct(userMs, 95), pct(bareMs, 95)],
] satisfies Row[];
printTable(rows, 'bare');
console.log(
  `\nnpm start (fresh DATA_DIR, Temporal dev server with its SQLite file, logs to files); ${RUNS} runs one at a time; ` +
    `model requests per run: ${[...new Set(modelCalls)].join(', ')} (the runtime ends a run at its output, so the final message is not asked for); ` +
    'bare = a workflow whose one activity spawns node -e 0 in a fresh sandbox, on the same Temporal server',
);
const p50s = timelineP50(timelines);
printTimeline(p50s, 'where a run goes (each moment p50 over the runs; Temporal events from the workflow history)');

writeResult('user-run', {
  when: new Date().toISOString(),
  machine: { cpus: os.cpus().length, node: process.version, load: os.loadavg().map((l) => Math.round(l * 100) / 100) },
  runs: RUNS,
  modelRequestsPerRun: [...new Set(modelCalls)],
  results: resultsOf(rows, 'bare'),
  timelineP50Ms: Object.fromEntries(p50s),
});

await connection.close();
await stopAll();
process.exit(0);
