// Issue 28: as root, the clone may sit under a folder only root can enter (/root is 0700 in most
// containers and VMs), and so may the temporary directory. Sandboxes run as `nobody`: the Node
// they run and every folder they mount must still be within that user's reach. Real worker
// processes, started on a Node binary (or with a TMPDIR) under a fresh 0700 folder, run an agent.
import { type ChildProcess, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { findBwrap, SANDBOX_UID } from '../../activities/sandbox/spawn.ts';
import { newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { runOnWorkerProcess, spawnWorkerProcess, workerEnv } from '../support/worker.ts';

/** Why these tests cannot say anything here, if so: only root hands sandboxes to another user. */
function skipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'the sandbox runs as its own user only when the worker is root';
  if (!findBwrap()) return 'bwrap is not installed';
  return undefined;
}

/** Whether the sandbox user can enter `dir`. */
function sandboxUserCanEnter(dir: string): boolean {
  return spawnSync('/bin/sh', ['-c', 'cd "$1"', 'sh', dir], { uid: SANDBOX_UID, gid: SANDBOX_UID, stdio: 'ignore' }).status === 0;
}

describe('runs from a clone under a private folder (issue 28)', function () {
  this.timeout(240_000);
  let api: TestApi;
  let model: FakeModel;
  let org: Awaited<ReturnType<typeof newOrg>>;
  const children = new Set<ChildProcess>();
  const folders: string[] = [];

  /** A fresh folder of mode 0700, as /root is: the sandbox user cannot enter it. */
  function privateFolder(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'private-clone-'));
    folders.push(dir);
    fs.chmodSync(dir, 0o700);
    expect(sandboxUserCanEnter(dir), `uid ${SANDBOX_UID} entered ${dir}`).to.equal(false);
    return dir;
  }

  function worker(env: Record<string, string>, node?: string): ChildProcess {
    const child = spawnWorkerProcess(env, { node });
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  }

  function runOn(child: ChildProcess, marker: string) {
    model.script(marker, [() => toolCall('output', { answer: marker })]);
    return runOnWorkerProcess(child, org.client, '@private/agent', { marker });
  }

  before(async function () {
    const why = skipReason();
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
    model = await new FakeModel().start();
    api = await startTestApi(workerEnv());
    org = await newOrg(api);
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    await importAgent(org.client, { name: '@private/agent', runtimeTools: ['output'], input: { type: 'object' } });
  });
  afterEach(async () => {
    for (const child of [...children]) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    for (const dir of folders.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  after(async () => {
    await api?.close();
    await model?.stop();
  });

  it('runs an agent on a worker whose Node lives under a 0700 folder, in bwrap as uid 65534', async () => {
    // The clone's layout: <clone>/node_modules/node/bin/node, the clone under a 0700 folder.
    const bin = path.join(privateFolder(), 'clone', 'node_modules', 'node', 'bin');
    fs.mkdirSync(bin, { recursive: true });
    fs.copyFileSync(process.execPath, path.join(bin, 'node'));
    fs.chmodSync(path.join(bin, 'node'), 0o755);
    const run = await runOn(worker({}, path.join(bin, 'node')), 'private-node');
    expect(run.status, run.error).to.equal('success');
    expect(run.result).to.deep.equal({ output: { answer: 'private-node' } });
    expect(run.sandboxMode).to.match(/^bwrap/);
  });

  it('runs an agent on a worker whose TMPDIR is a 0700 folder (a cold sandbox: its socket, files and runtime folders)', async () => {
    const run = await runOn(worker({ TMPDIR: privateFolder(), SANDBOX_WARM_POOL: '0' }), 'private-tmp');
    expect(run.status, run.error).to.equal('success');
    expect(run.result).to.deep.equal({ output: { answer: 'private-tmp' } });
    expect(run.sandboxMode).to.match(/^bwrap/);
  });

  it('runs an agent handed to a warm sandbox on a worker whose TMPDIR is a 0700 folder', async () => {
    const run = await runOn(worker({ TMPDIR: privateFolder(), SANDBOX_WARM_POOL: '1' }), 'private-tmp-warm');
    expect(run.status, run.error).to.equal('success');
    expect(run.sandboxMode).to.match(/^bwrap/);
  });
});
