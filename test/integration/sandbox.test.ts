// The sandbox of DESIGN.md section 3: what an agent process can and cannot do.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { prepareRunFiles } from '../../activities/run-files.ts';
import { createRunCgroup, detectCgroupMode } from '../../activities/sandbox/cgroups.ts';
import { spawnSandbox, useSandboxSetting } from '../../activities/sandbox/spawn.ts';
import { DiskStorage } from '../../shared/files/disk-storage.ts';
import { newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

/** Runs a probe script inside the sandbox and returns what it printed as JSON. */
async function probe(
  script: string,
  memoryMb = 256,
  files?: { inputDir: string; outputDir: string },
): Promise<{ result: any; exit: { code: number | null; oomKilled: boolean }; mode: string }> {
  let out = '';
  const sandbox = spawnSandbox({ name: `probe-${Date.now()}-${Math.random().toString(36).slice(2)}`, nodeArgs: ['-e', script], memoryMb, cpus: 1, files });
  sandbox.child.stdout!.removeAllListeners('data');
  sandbox.child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exit = await sandbox.exited;
  return { result: out.trim() ? JSON.parse(out.trim().split('\n').pop()!) : null, exit, mode: sandbox.mode };
}

describe('sandbox', function () {
  this.timeout(60_000);
  let target: http.Server;
  let targetPort: number;
  let hits = 0;

  before(async () => {
    target = http.createServer((_req, res) => {
      hits++;
      res.end('reached');
    });
    await new Promise<void>((r) => target.listen(0, '0.0.0.0', r));
    targetPort = (target.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((r) => target.close(() => r())));

  it('runs under bwrap with a cgroup where the host allows it', async () => {
    const { result, mode } = await probe('console.log(JSON.stringify({ uid: process.getuid() }))');
    expect(mode).to.match(/^bwrap/);
    expect(result.uid).to.equal(65534);
  });

  it('cannot reach the network, loopback included', async () => {
    const script = `
      const net = require('node:net');
      const tryConnect = (host) => new Promise((resolve) => {
        const s = net.connect(${targetPort}, host);
        s.once('connect', () => { s.destroy(); resolve('connected'); });
        s.once('error', (e) => resolve(e.code));
      });
      Promise.all([tryConnect('127.0.0.1'), tryConnect('10.0.2.2'), require('node:dns').promises.lookup('example.com').then(() => 'resolved', (e) => e.code)])
        .then((r) => console.log(JSON.stringify(r)));`;
    const { result } = await probe(script);
    expect(result[0]).to.not.equal('connected');
    expect(result[1]).to.not.equal('connected');
    expect(result[2]).to.not.equal('resolved');
    expect(hits).to.equal(0);
  });

  it('sees no secret: empty environment, no host processes, no project or data files', async () => {
    process.env.PROBE_SECRET = 'sk-should-not-leak';
    const script = `
      const fs = require('node:fs');
      const tryRead = (p) => { try { return fs.readFileSync(p, 'utf8').slice(0, 20); } catch (e) { return e.code; } };
      console.log(JSON.stringify({
        env: process.env,
        pids: fs.readdirSync('/proc').filter((d) => /^\\d+$/.test(d)),
        parentEnviron: tryRead('/proc/${process.pid}/environ'),
        project: tryRead('${process.cwd()}/package.json'),
        root: fs.readdirSync('/').sort(),
        shadow: tryRead('/etc/shadow'),
      }));`;
    const { result } = await probe(script);
    delete process.env.PROBE_SECRET;
    expect(Object.keys(result.env).sort()).to.deep.equal(['HOME', 'PATH', 'PWD', 'SIDECAR_SOCKET', 'TMPDIR']);
    expect(JSON.stringify(result)).not.to.contain('sk-should-not-leak');
    expect(result.pids.length).to.be.lessThan(5);
    expect(result.parentEnviron).to.equal('ENOENT');
    expect(result.project).to.equal('ENOENT');
    expect(result.shadow).to.equal('ENOENT');
    expect(result.root).to.not.include('work').and.not.include('etc').and.not.include('tmp');
  });

  it('can write only inside its workspace', async () => {
    const script = `
      const fs = require('node:fs');
      const tryWrite = (p) => { try { fs.writeFileSync(p, 'x'); return 'written'; } catch (e) { return e.code; } };
      console.log(JSON.stringify({ workspace: tryWrite('/workspace/out.txt'), usr: tryWrite('/usr/evil'), runtime: \
tryWrite('/runtime/evil'), root: tryWrite('/evil') }));`;
    const { result } = await probe(script);
    expect(result.workspace).to.equal('written');
    expect(result.usr).to.be.oneOf(['EROFS', 'EACCES', 'EPERM']);
    expect(result.runtime).to.be.oneOf(['EROFS', 'EACCES', 'EPERM']);
    expect(result.root).to.be.oneOf(['EROFS', 'EACCES', 'EPERM']);
  });

  it("reads a run's input files read-only at /workspace/input and writes its outputs to /workspace/output", async () => {
    const storage = new DiskStorage(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-files-')));
    await storage.put('k/doc', Readable.from([Buffer.from('the input')]), 9);
    const ws = await prepareRunFiles(
      storage,
      { input: { doc: 'file_probe' } },
      [{ id: 'file_probe', field: 'doc', name: 'a.txt', storage_key: 'k/doc' }],
      1000,
    );
    try {
      expect(ws.info.inputs).to.deep.equal({ doc: '/workspace/input/doc/a.txt' });
      const script = `
        const fs = require('node:fs');
        const tryWrite = (p) => { try { fs.writeFileSync(p, 'x'); return 'written'; } catch (e) { return e.code; } };
        console.log(JSON.stringify({ read: fs.readFileSync('/workspace/input/doc/a.txt', 'utf8'), input: \
tryWrite('/workspace/input/doc/a.txt'), newInput: tryWrite('/workspace/input/b.txt'), output: \
tryWrite('/workspace/output/out.txt') }));`;
      const { result } = await probe(script, 256, ws);
      expect(result.read).to.equal('the input');
      expect(result.input).to.be.oneOf(['EROFS', 'EACCES', 'EPERM']);
      expect(result.newInput).to.be.oneOf(['EROFS', 'EACCES', 'EPERM']);
      expect(result.output).to.equal('written');
      expect(fs.readFileSync(path.join(ws.outputDir, 'out.txt'), 'utf8')).to.equal('x');
      expect(fs.readFileSync(path.join(ws.inputDir, 'doc', 'a.txt'), 'utf8')).to.equal('the input');
    } finally {
      await ws.remove();
      fs.rmSync(storage.root, { recursive: true, force: true });
    }
    expect(fs.existsSync(ws.inputDir)).to.equal(false);
  });

  it('kills a process that exceeds its memory ceiling', async () => {
    const { exit, result } = await probe('const a = []; for (;;) a.push(Buffer.alloc(8 * 1024 * 1024, 1));', 64);
    expect(result).to.equal(null);
    expect(exit.code).to.not.equal(0);
    expect(exit.oomKilled).to.equal(true);
  });

  it('ends with its own process, though something it started still holds its pipes', async () => {
    // Unisolated, a process the agent detaches outlives it (under bwrap only a child bwrap had not
    // yet bound to its parent can, when bwrap is killed as it starts: spawn.ts).
    useSandboxSetting('process');
    let straggler = 0;
    try {
      const sandbox = spawnSandbox({
        name: `probe-straggler-${Date.now()}`,
        nodeArgs: [
          '-e',
          `const c = require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'inherit', detached: true });
           console.log(JSON.stringify({ pid: c.pid })); c.unref(); process.exit(0);`,
        ],
        memoryMb: 128,
        cpus: 1,
      });
      let out = '';
      sandbox.child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
      });
      const started = Date.now();
      const exit = await Promise.race([sandbox.exited, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
      straggler = JSON.parse(out.trim()).pid;
      expect(exit, 'the sandbox never ended').to.not.equal(null);
      expect(exit!.code).to.equal(0);
      expect(Date.now() - started).to.be.lessThan(5000);
      expect(process.kill(straggler, 0), 'the straggler is still alive: the sandbox did not wait for it').to.equal(true);
    } finally {
      useSandboxSetting('bwrap');
      if (straggler) process.kill(straggler, 'SIGKILL');
    }
  });

  it("kills every process left in a sandbox's cgroup", async function () {
    if (detectCgroupMode() === 'none') this.skip(); // no cgroup to kill by
    const cgroup = createRunCgroup(`probe-leftover-${Date.now()}`, { memoryMb: 64, cpus: 1 }, 0);
    const join = cgroup.procsFiles.map((f) => `echo $$ > '${f}' && `).join('');
    // Two processes in it, one started by the other, as a sandbox's init and agent would be.
    const left = spawn('/bin/sh', ['-c', `${join}{ sleep 600 & exec sleep 600; }`], { stdio: 'ignore' });
    try {
      for (let i = 0; i < 100 && fs.readFileSync(cgroup.procsFiles[0], 'utf8').trim().split('\n').length < 2; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(fs.readFileSync(cgroup.procsFiles[0], 'utf8').trim().split('\n')).to.have.length(2);
      cgroup.killAll();
      const [, signal] = await once(left, 'exit');
      expect(signal).to.equal('SIGKILL');
      for (let i = 0; i < 100 && fs.readFileSync(cgroup.procsFiles[0], 'utf8').trim() !== ''; i++) await new Promise((r) => setTimeout(r, 20));
      expect(fs.readFileSync(cgroup.procsFiles[0], 'utf8').trim()).to.equal('');
    } finally {
      left.kill('SIGKILL');
      await cgroup.remove();
    }
  });

  describe('a run over its memory ceiling', () => {
    let api: TestApi;
    let model: FakeModel;
    let worker: Awaited<ReturnType<typeof startTestWorker>>;

    before(async () => {
      model = await new FakeModel().start();
      api = await startTestApi(workerEnv());
      // The answer must pass the sidecar's cap on model answers to reach the sandbox's ceiling.
      worker = await startTestWorker({
        PLATFORM_RUN_LIMITS: JSON.stringify({ agent_memory_ceiling_mb: 64 }),
        MODEL_MAX_ANSWER_BYTES: String(256 * 1024 * 1024),
      });
    });
    after(async () => {
      await worker?.stop();
      await api?.close();
      await model?.stop();
    });

    it('ends `failed` with the reason', async () => {
      const org = await newOrg(api);
      await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
      await importAgent(org.client, { name: '@mem/hog' });
      // The model answers with a tool call whose arguments are far larger than 64 MiB once parsed.
      model.setFallback(() => toolCall('log', { level: 'info', message: 'x'.repeat(90 * 1024 * 1024) }));
      const run = await org.client.post('/api/agents/@mem/hog/run', { input: {} });
      const done = await org.client.get(`/api/runs/${run.body.id}?wait=50`);
      expect(done.body.status).to.equal('failed');
      expect(done.body.error).to.contain('exceeded its memory ceiling of 64 MiB');
    });
  });
});
