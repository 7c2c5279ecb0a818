// Agents that run code (issue 31, DESIGN.md 9), measured where their costs are, with no Temporal
// or database in the way: real sandboxes (bwrap, seccomp, cgroups, the code layout's sized
// workspace) driven by the real agent runtime through a session (activities/sandbox/session.ts),
// answered by a minimal sidecar that speaks its protocol and scripts `bash` calls.
// - start to first command: from handing the work to a warm sandbox (or spawning one, cold) to
//   the first command's result at the sidecar (the runtime's start, its first model answer, the
//   workspace tools loaded, `echo` run by bash); goal 50 ms warm;
// - `echo` round trip through `bash`: from the runtime announcing the command to its result at
//   the sidecar (bash started in its process group, the output read, the group killed); goal 20 ms;
// - checkpoint and restore of a 100 MB workspace (activities/sandbox/checkpoints.ts) in the
//   configured file storage, and the walk that skips a checkpoint when nothing changed; goal 1 s;
// - fixed memory per sandbox beyond the runtime: the proportional memory (Pss) of its bwrap
//   processes plus what its empty workspace holds, for warm sandboxes of the code layout; goal 10 MB.
// Writes JSON under test/bench/results/.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { restoreCheckpoint, WorkspaceCheckpoints, checkpointsOf } from '../../activities/sandbox/checkpoints.ts';
import { SandboxPool } from '../../activities/sandbox/pool.ts';
import { SandboxSession } from '../../activities/sandbox/session.ts';
import { prepareSandboxes } from '../../activities/sandbox/spawn.ts';
import { codeFolders, makeSandboxFolders, removeSandboxFolders, sandboxFoldersOf } from '../../activities/sandbox/workspace.ts';
import { type RunSpec, SIDECAR_PATHS } from '../../activities/sidecar/protocol.ts';
import { WORKSPACE_TOOL_NAMES } from '../../activities/sidecar/workspace-tools.ts';
import { loadConfig } from '../../shared/config.ts';
import { fileStorage } from '../../shared/files/configured-storage.ts';
import { createLogger } from '../../shared/log.ts';
import { workerEnv } from '../support/worker.ts';
import { pct, printTable, type Row, resultsOf, say, writeResult } from './report.ts';
import { pssMb } from './proc-memory.ts';

const WARM_RUNS = 20;
const COLD_RUNS = 8;
const COMMANDS = 5;
const CHECKPOINTS = 5;
const WARM_SANDBOXES = 3;

const config = loadConfig(workerEnv({ SANDBOX_WARM_POOL: '1' }));
const log = createLogger('silent', 'bench-agent-code');
const limits = config.platformRunLimits;
const { mode } = prepareSandboxes();
say(`sandboxes: ${mode}`);

/** What one sandboxed session measured. */
interface Timings {
  firstResultMs: number;
  echoMs: number[];
}

/** The sidecar's side of the protocol for `COMMANDS` echo commands, then `output`. */
class ScriptedSidecar {
  readonly server: http.Server;
  readonly done: Promise<Timings>;
  private commands = 0;
  private began = 0;
  private readonly startedAt: number;
  private readonly timings: Timings = { firstResultMs: 0, echoMs: [] };

  constructor(startedAt: number) {
    this.startedAt = startedAt;
    let finish!: (t: Timings) => void;
    this.done = new Promise((resolve) => {
      finish = resolve;
    });
    this.server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
      const reply = (value: unknown) => {
        const text = JSON.stringify(value);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      };
      const url = req.url ?? '';
      if (url === SIDECAR_PATHS.run) {
        return reply({ system: 'bench', input: {}, maxTurns: 50, localTools: [...WORKSPACE_TOOL_NAMES], workspace: true } satisfies RunSpec);
      }
      if (url === SIDECAR_PATHS.model) {
        const call = this.commands < COMMANDS ? { name: 'bash', arguments: JSON.stringify({ command: 'echo hi' }) } : { name: 'output', arguments: '{}' };
        return reply({ message: { role: 'assistant', content: null, tool_calls: [{ id: `c${body.messages.length}`, type: 'function', function: call }] } });
      }
      if (url === SIDECAR_PATHS.localBegin) {
        this.began = performance.now();
        return reply({ timeoutMs: 60_000 });
      }
      if (url === SIDECAR_PATHS.localEnd) {
        const now = performance.now();
        if (this.commands === 0) this.timings.firstResultMs = now - this.startedAt;
        else this.timings.echoMs.push(now - this.began);
        this.commands++;
        return reply({ content: body.content });
      }
      if (url.startsWith(SIDECAR_PATHS.tools)) {
        reply({ content: 'done', done: true });
        return finish(this.timings);
      }
      res.writeHead(404).end();
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One session: a warm sandbox from `pool` when given (waited for until ready), else a cold one. */
async function oneSession(pool: SandboxPool | undefined, name: string): Promise<Timings> {
  // Outside an activity: what the session reads of its context, a cancellation that never comes.
  const ctx = { cancellationSignal: new AbortController().signal, heartbeat: () => {} } as never;
  const session = new SandboxSession({ kind: 'run', name, logFields: {}, ctx }, { config, log, sandboxPool: pool });
  try {
    const warmDir = session.warmFolder({ code: true });
    if (pool && !warmDir) throw new Error('no warm sandbox waited');
    let folders = warmDir ? sandboxFoldersOf(warmDir) : undefined;
    if (!folders) {
      const made = await codeFolders(undefined, { diskMb: limits.agent_disk_ceiling_mb, processMode: mode === 'process' });
      session.defer(() => made.remove());
      folders = made.folders;
    }
    const startedAt = performance.now();
    const sidecar = new ScriptedSidecar(startedAt);
    await session.start(sidecar, folders);
    const timings = await Promise.race([sidecar.done, settle(30_000).then(() => Promise.reject(new Error('the session did not finish in 30 s')))]);
    await session.close(false);
    return timings;
  } catch (err) {
    await session.close(true);
    throw err;
  }
}

function runs(all: Timings[]) {
  return { first: all.map((t) => t.firstResultMs), echo: all.flatMap((t) => t.echoMs) };
}

say(`1/4 start to first command and echo round trips, warm (${WARM_RUNS} sessions of ${COMMANDS} commands)...`);
const pool = new SandboxPool({
  size: 1,
  memoryMb: limits.agent_memory_ceiling_mb,
  cpus: limits.agent_cpu_ceiling,
  pids: limits.agent_pids_ceiling,
  diskMb: limits.agent_disk_ceiling_mb,
  log,
});
pool.fill();
const warmTimings: Timings[] = [];
for (let i = 0; i < WARM_RUNS; i++) {
  await settle(1500); // the replacement taken last time is started and ready, as between runs
  warmTimings.push(await oneSession(pool, `bench-warm-${i}`));
}
await pool.close();
const warm = runs(warmTimings);

say(`2/4 the same, cold (${COLD_RUNS} sessions)...`);
const coldTimings: Timings[] = [];
for (let i = 0; i < COLD_RUNS; i++) coldTimings.push(await oneSession(undefined, `bench-cold-${i}`));
const cold = runs(coldTimings);

say(`3/4 checkpoint and restore of a 100 MB workspace (${CHECKPOINTS} each)...`);
const storage = await fileStorage(config);
const roots: string[] = [];
async function workspace(): Promise<string> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `workspace-${process.pid}-bench-`));
  roots.push(root);
  const folders = await makeSandboxFolders(root, { code: true, diskMb: limits.agent_disk_ceiling_mb, processMode: mode === 'process' });
  return folders.workspaceDir!;
}
const source = await workspace();
// 100 MB as a workspace holds it: one large file, some output files, a tree of small sources.
fs.writeFileSync(path.join(source, 'data.bin'), Buffer.alloc(60 * 1024 * 1024, 7));
for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(source, 'output', `part-${i}.csv`), Buffer.alloc(1024 * 1024, 65 + i));
for (let d = 0; d < 20; d++) {
  fs.mkdirSync(path.join(source, 'src', `pkg${d}`), { recursive: true });
  for (let f = 0; f < 100; f++) fs.writeFileSync(path.join(source, 'src', `pkg${d}`, `mod${f}.py`), Buffer.alloc(10 * 1024, 97));
}
const runId = `run_bench${Date.now()}`;
const { checkpoints } = await WorkspaceCheckpoints.open(
  { storage, runId, dir: source, attempt: 1, ceilingMb: limits.agent_disk_ceiling_mb },
  { recordedBy: () => undefined },
);
const takeMs: number[] = [];
const skipMs: number[] = [];
const restoreMs: number[] = [];
let bytes = 0;
for (let i = 0; i < CHECKPOINTS; i++) {
  fs.writeFileSync(path.join(source, 'changed.txt'), String(i));
  let t = performance.now();
  const taken = await checkpoints.take(i + 1);
  takeMs.push(performance.now() - t);
  if (!taken) throw new Error('the workspace changed, yet no checkpoint was taken');
  checkpoints.settle(taken);
  t = performance.now();
  if (await checkpoints.take(i + 100)) throw new Error('nothing changed, yet a checkpoint was taken');
  skipMs.push(performance.now() - t);
  const target = await workspace();
  t = performance.now();
  bytes = (await restoreCheckpoint(storage, taken.key, target, limits.agent_disk_ceiling_mb)).bytes;
  restoreMs.push(performance.now() - t);
  await removeSandboxFolders(path.dirname(target));
}
await storage.deleteAll(checkpointsOf(runId));
for (const root of roots) await removeSandboxFolders(root);

say(`4/4 memory of ${WARM_SANDBOXES} warm sandboxes waiting...`);
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(d), ...childrenOf(Number(d)));
    } catch {}
  }
  return out;
}
const comm = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
};
const memoryPool = new SandboxPool({
  size: WARM_SANDBOXES,
  memoryMb: limits.agent_memory_ceiling_mb,
  cpus: limits.agent_cpu_ceiling,
  pids: limits.agent_pids_ceiling,
  diskMb: limits.agent_disk_ceiling_mb,
  log,
});
memoryPool.fill();
await settle(5000);
const waiting = Array.from({ length: WARM_SANDBOXES }, () => memoryPool.take({ code: true })).filter((w) => w !== undefined);
await settle(1000);
/** What the sandbox's memory cgroup holds (its processes' memory, the kernel's for them, its tmpfs pages), in MB. */
function cgroupMb(pid: number): number {
  try {
    const lines = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n');
    const v2 = lines.find((l) => l.startsWith('0::'));
    const v1 = lines.find((l) => /:memory:/.test(l));
    const file = v1 ? `/sys/fs/cgroup/memory${v1.split(':')[2]}/memory.usage_in_bytes` : `/sys/fs/cgroup${v2!.slice(3)}/memory.current`;
    return Number(fs.readFileSync(file, 'utf8')) / 1024 / 1024;
  } catch {
    return 0;
  }
}
const perSandbox = waiting.map((w) => {
  const pids = [w.sandbox.child.pid!, ...childrenOf(w.sandbox.child.pid!)];
  const wrapper = pids.filter((p) => comm(p) === 'bwrap').reduce((n, p) => n + pssMb(p), 0);
  const runtimePids = pids.filter((p) => comm(p) !== 'bwrap');
  const runtime = runtimePids.reduce((n, p) => n + pssMb(p), 0);
  const ws = fs.statfsSync(sandboxFoldersOf(w.dir).workspaceDir!);
  const workspaceMb = ((ws.blocks - ws.bfree) * ws.bsize) / 1024 / 1024;
  return { wrapper, runtime, workspaceMb, cgroup: runtimePids.length ? cgroupMb(runtimePids[0]) : 0 };
});
for (const w of waiting) {
  w.sandbox.kill();
  await w.sandbox.exited;
  await removeSandboxFolders(w.dir);
}
await memoryPool.close();
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
const fixedMb = avg(perSandbox.map((s) => s.wrapper + s.workspaceMb));
const runtimeMb = avg(perSandbox.map((s) => s.runtime));
const cgroupAvgMb = avg(perSandbox.map((s) => s.cgroup));

const rows: Row[] = [
  ['start to first command p50, warm (ms)', pct(warm.first, 50), 50],
  ['start to first command p95, warm (ms)', pct(warm.first, 95), 50],
  ['start to first command p50, cold (ms)', pct(cold.first, 50), 50],
  ['echo round trip p50 (ms)', pct(warm.echo, 50), 20],
  ['echo round trip p95 (ms)', pct(warm.echo, 95), 20],
  ['checkpoint 100 MB p50 (ms)', pct(takeMs, 50), 1000],
  ['restore 100 MB p50 (ms)', pct(restoreMs, 50), 1000],
  ['unchanged workspace walk p50 (ms)', pct(skipMs, 50), 1000],
  ['fixed memory per sandbox (MB)', fixedMb, 10],
];
printTable(rows, 'goal');
console.log(
  `\ngoal = issue 31's targets. Checkpoints of ${(bytes / 1024 / 1024).toFixed(0)} MB of files (1 of 60 MB, 20 of 1 MB, 2000 ` +
    `of 10 KB) in ${storage.constructor.name}; ` +
    `the runtime of a waiting sandbox takes ${runtimeMb.toFixed(1)} MB (Pss) beside the fixed part; its memory cgroup holds ${cgroupAvgMb.toFixed(1)} ` +
    `MB in all.`,
);
writeResult('agent-code', {
  when: new Date().toISOString(),
  sandboxMode: mode,
  results: resultsOf(rows, 'goal'),
  runtimePssMb: Math.round(runtimeMb * 10) / 10,
  sandboxCgroupMb: Math.round(cgroupAvgMb * 10) / 10,
  storage: storage.constructor.name,
});
process.exit(0);
