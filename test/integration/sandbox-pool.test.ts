// Warm sandboxes (activities/sandbox/pool.ts): a run hands over to a sandbox started before it,
// isolated as every sandbox is, and no sandbox serves a second run.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createRunCgroup, detectCgroupMode } from '../../activities/sandbox/cgroups.ts';
import { SandboxPool, type WarmSandbox } from '../../activities/sandbox/pool.ts';
import { createLogger } from '../../shared/log.ts';
import { newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, textAnswer, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

/** A probe in place of the runtime: says `ready`, waits for its go, then runs `body` (which prints its result as JSON). */
const probeArgs = (body: string) => ['-e', `process.stdout.write('ready\\n'); process.stdin.once('data', async () => { ${body} });`];

async function takeReady(pool: SandboxPool): Promise<WarmSandbox> {
  for (let i = 0; i < 200; i++) {
    const warm = pool.take();
    if (warm?.ready) return warm;
    if (warm) {
      // Taken before it said ready: wait for it (a run would hand over at once).
      for (let j = 0; j < 200 && !warm.ready; j++) await new Promise((r) => setTimeout(r, 25));
      return warm;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('no warm sandbox started');
}

/** Lets a taken probe go and returns the last JSON line it printed, with its exit. */
async function run(warm: WarmSandbox) {
  let out = '';
  warm.sandbox.child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  expect(warm.sandbox.go()).to.equal(true);
  const exit = await warm.sandbox.exited;
  const last = out.replace('ready\n', '').trim().split('\n').pop();
  return { exit, result: last ? JSON.parse(last) : null };
}

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(done()).to.equal(true);
}

/** This process's sandboxes running a probe (bwrap, started through sh -c exec, names the probe's script). */
function waitingPids(): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const status = fs.readFileSync(`/proc/${d}/status`, 'utf8');
      if (
        status.match(/^PPid:\s+(\d+)/m)?.[1] === String(process.pid) &&
        alive(Number(d)) &&
        fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('stdin.once')
      )
        out.push(Number(d));
    } catch {}
  }
  return out;
}

const alive = (pid: number) => {
  try {
    return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

describe('warm sandboxes', function () {
  this.timeout(60_000);

  it("are isolated as any sandbox: uid nobody, empty environment, no network, read-only root, the run's folders mounted", async () => {
    let hits = 0;
    const target = http.createServer((_req, res) => {
      hits++;
      res.end('reached');
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const port = (target.address() as AddressInfo).port;
    const pool = new SandboxPool({
      size: 1,
      memoryMb: 256,
      cpus: 1,
      nodeArgs: probeArgs(`
        const fs = require('node:fs');
        const net = require('node:net');
        const tryWrite = (p) => { try { fs.writeFileSync(p, 'x'); return 'written'; } catch (e) { return e.code; } };
        const connected = await new Promise((resolve) => {
          const s = net.connect(${port}, '127.0.0.1');
          s.once('connect', () => { s.destroy(); resolve('connected'); });
          s.once('error', (e) => resolve(e.code));
        });
        console.log(JSON.stringify({
          uid: process.getuid(),
          env: Object.keys(process.env).sort(),
          pids: fs.readdirSync('/proc').filter((d) => /^\\d+$/.test(d)).length,
          connected,
          input: fs.readFileSync('/workspace/input/late.txt', 'utf8'),
          inputWrite: tryWrite('/workspace/input/late.txt'),
          output: tryWrite('/workspace/output/out.txt'),
          root: tryWrite('/evil'),
          usr: tryWrite('/usr/evil'),
          sidecar: fs.readdirSync('/sidecar'),
        }));
        process.exit(0);`),
    });
    try {
      pool.fill();
      const warm = await takeReady(pool);
      expect(warm.sandbox.mode).to.match(/^bwrap/);
      // What the run brings is written at hand-over, after the sandbox started.
      fs.writeFileSync(path.join(warm.dir, 'input', 'late.txt'), 'written at hand-over');
      // As the session does when its sidecar listens there (sandbox/session.ts listenForSandbox).
      fs.writeFileSync(path.join(warm.socketDir, 'sidecar.sock'), '');
      fs.chownSync(warm.socketDir, 65534, 65534);
      const { result, exit } = await run(warm);
      expect(exit.code, exit.stderrTail).to.equal(0);
      expect(result.uid).to.equal(65534);
      expect(result.env).to.deep.equal(['HOME', 'PATH', 'PWD', 'SIDECAR_SOCKET', 'TMPDIR']);
      expect(result.pids).to.be.lessThan(5);
      expect(result.connected).to.not.equal('connected');
      expect(hits).to.equal(0);
      expect(result.input).to.equal('written at hand-over');
      expect(result.inputWrite).to.be.oneOf(['EROFS', 'EACCES', 'EPERM']);
      expect(result.output).to.equal('written');
      expect(fs.readFileSync(path.join(warm.dir, 'output', 'out.txt'), 'utf8')).to.equal('x');
      expect(result.root).to.be.oneOf(['EROFS', 'EACCES', 'EPERM']);
      expect(result.usr).to.be.oneOf(['EROFS', 'EACCES', 'EPERM']);
      expect(result.sidecar).to.deep.equal(['sidecar.sock']);
      fs.rmSync(warm.dir, { recursive: true, force: true });
    } finally {
      await pool.close();
      await new Promise<void>((r) => target.close(() => r()));
    }
  });

  it('keep their memory ceiling after the go', async function () {
    if (detectCgroupMode() === 'none') this.skip(); // no ceiling to keep without writable cgroups
    const pool = new SandboxPool({ size: 1, memoryMb: 64, cpus: 1, nodeArgs: probeArgs('const a = []; for (;;) a.push(Buffer.alloc(8 * 1024 * 1024, 1));') });
    try {
      pool.fill();
      const warm = await takeReady(pool);
      const { exit } = await run(warm);
      expect(exit.code).to.not.equal(0);
      expect(exit.oomKilled).to.equal(true);
      fs.rmSync(warm.dir, { recursive: true, force: true });
    } finally {
      await pool.close();
    }
  });

  it('are replaced when one ends while waiting, and killed when the pool closes', async () => {
    const pool = new SandboxPool({ size: 2, memoryMb: 128, cpus: 1, nodeArgs: probeArgs('process.exit(0);') });
    try {
      pool.fill();
      await until(() => waitingPids().length === 2);
      const [first] = waitingPids();
      process.kill(first, 'SIGKILL');
      await until(() => !alive(first) && waitingPids().length === 2);
      const waiting = waitingPids();
      expect(waiting).to.not.include(first);
      await pool.close();
      expect(waiting.filter(alive)).to.deep.equal([]);
      expect(pool.take()).to.equal(undefined);
    } finally {
      await pool.close();
    }
  });

  it("remove the folders and empty cgroups of a worker that was killed, never a live worker's", async () => {
    // A pid no process has (pids stay below 2^22), and one that is alive (init).
    const gone = 4_194_303;
    const dead = fs.mkdtempSync(path.join(os.tmpdir(), `sandbox-pool-${gone}-`));
    const live = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-pool-1-'));
    const cgroups = detectCgroupMode() === 'none' ? undefined : createRunCgroup(`warm-${gone}-leftover`, { memoryMb: 64, cpus: 1 }, 0);
    const pool = new SandboxPool({ size: 0, memoryMb: 64, cpus: 1 });
    try {
      expect(fs.existsSync(dead)).to.equal(false);
      expect(fs.existsSync(live)).to.equal(true);
      for (const procs of cgroups?.procsFiles ?? []) expect(fs.existsSync(path.dirname(procs)), procs).to.equal(false);
    } finally {
      await pool.close();
      fs.rmSync(live, { recursive: true, force: true });
      await cgroups?.remove();
    }
  });

  /** An API and a worker whose pool keeps `size` sandboxes, with the worker's log lines. */
  function serviceWithPool(size: string) {
    const service = { api: undefined as unknown as TestApi, model: undefined as unknown as FakeModel, logs: [] as Array<Record<string, any>> };
    let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined;
    before(async () => {
      service.model = await new FakeModel().start();
      service.api = await startTestApi(workerEnv());
      const sink = new Writable({
        write(chunk, _enc, done) {
          for (const line of chunk.toString().split('\n').filter(Boolean)) service.logs.push(JSON.parse(line));
          done();
        },
      });
      worker = await startTestWorker({ SANDBOX_WARM_POOL: size, LOG_LEVEL: 'debug' }, createLogger('debug', 'worker-test', sink));
    });
    after(async () => {
      await worker?.stop();
      await service.api?.close();
      await service.model?.stop();
    });
    return service;
  }

  describe('serving runs', () => {
    const service = serviceWithPool('1');

    it('hands each run to a warm sandbox that serves no other run and is gone after it', async () => {
      const { api, model, logs } = service;
      const org = await newOrg(api);
      await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
      await importAgent(org.client, { name: '@pool/quick', output: { type: 'object', properties: { ok: { type: 'boolean' } } } });
      model.setFallback(() => toolCall('output', { ok: true }));
      const served: Array<{ runId: string; sandbox: string; pid: number }> = [];
      for (let i = 0; i < 3; i++) {
        const run = await org.client.post('/api/agents/@pool/quick/run', { input: {} });
        const done = await org.client.get(`/api/runs/${run.body.id}?wait=30`);
        expect(done.body.status).to.equal('success');
        expect(done.body.result).to.deep.equal({ output: { ok: true } });
        expect(done.body.sandboxMode).to.match(/^bwrap/);
        const line = logs.find((l) => l.msg === 'run handed to a warm sandbox' && l.runId === run.body.id);
        expect(line, `run ${i + 1} was not handed to a warm sandbox`).to.not.equal(undefined);
        served.push({ runId: run.body.id, sandbox: line!.sandbox, pid: line!.pid });
        // The sandbox ended with its run.
        for (let j = 0; j < 100 && alive(line!.pid); j++) await new Promise((r) => setTimeout(r, 20));
        expect(alive(line!.pid)).to.equal(false);
      }
      expect(new Set(served.map((s) => s.sandbox)).size).to.equal(3);
      expect(new Set(served.map((s) => s.pid)).size).to.equal(3);
    });

    it('hands each chat turn to a warm sandbox too, gone after its reply', async () => {
      const { api, model, logs } = service;
      const org = await newOrg(api);
      await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
      await importAgent(org.client, { name: '@pool/chat' });
      model.script('pool-chat', [() => textAnswer('first'), () => textAnswer('second')]);
      const session = (await org.client.post('/api/chat/sessions', { packageId: '@pool/chat' })).body;
      const pids: number[] = [];
      for (const [content, reply] of [
        ['pool-chat one', 'first'],
        ['pool-chat two', 'second'],
      ]) {
        const sent = await org.client.post(`/api/chat/sessions/${session.id}/messages`, { content });
        expect(sent.status, sent.text).to.equal(200);
        expect(sent.body.reply).to.include({ status: 'completed', content: reply });
        const line = logs.find((l) => l.msg === 'chat turn handed to a warm sandbox' && l.messageId === sent.body.message.id);
        expect(line, `the turn "${content}" was not handed to a warm sandbox`).to.not.equal(undefined);
        for (let j = 0; j < 100 && alive(line!.pid); j++) await new Promise((r) => setTimeout(r, 20));
        expect(alive(line!.pid)).to.equal(false);
        pids.push(line!.pid);
      }
      expect(new Set(pids).size).to.equal(2);
    });
  });

  describe('with SANDBOX_WARM_POOL=0', () => {
    const service = serviceWithPool('0');

    it('starts a sandbox for each run', async () => {
      const { api, model, logs } = service;
      const org = await newOrg(api);
      await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
      await importAgent(org.client, { name: '@pool/cold' });
      model.setFallback(() => toolCall('output', {}));
      const runs = await Promise.all([1, 2].map(() => org.client.post('/api/agents/@pool/cold/run', { input: {} })));
      for (const r of runs) expect((await org.client.get(`/api/runs/${r.body.id}?wait=30`)).body.status).to.equal('success');
      expect(logs.filter((l) => l.msg === 'run handed to a warm sandbox')).to.deep.equal([]);
    });
  });
});
