// A production install (issue 30): the project's files (tracked and new, as `git ls-files -co
// --exclude-standard` lists them) copied to a temporary folder and installed as a container image
// would, `npm ci --omit=dev`: no devDependencies, so no `node` package either, and the npm scripts
// run on the machine's Node. This machine's own Node may be older than 24: the Node 24 this test
// runs on plays the system's Node 24, first on the PATH. Then the documented production starts,
// against the test stack's Postgres (a fresh database each) and Temporal:
// `npm run start:prod` (migrations, then a supervised worker and API), and one process per
// container (`npm run migrate`, `start:worker`, `start:api`). Each must serve the API, its OIDC
// discovery and the bootstrap of the first owner, and run an agent; SIGTERM to npm (what
// `docker stop` sends) must stop everything.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { waitForHealthy } from '../../shared/stack/health.ts';
import { freePort } from '../../shared/stack/ports.ts';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { freshDatabaseOn } from '../setup/global.ts';
import { Client, PASSWORD, uniqueEmail } from '../support/api.ts';
import { FakeModel } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { alive, descendants, killTree } from '../support/processes.ts';
import { stack } from '../support/stack.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The folder of the Node 24 binary running this test: put first on the PATH, it is "the system's Node 24". */
const NODE24_DIR = path.dirname(fs.realpathSync(process.execPath));
/** The machine's PATH without it, for the version check. */
const SYSTEM_PATH = (process.env.PATH ?? '')
  .split(':')
  .filter((dir) => !dir.includes('node_modules') && dir !== NODE24_DIR)
  .join(':');

/** Only what a production host has: no setting of the test process leaks into the service. */
function hostEnv(settings: Record<string, string>, pathDirs = `${NODE24_DIR}:${SYSTEM_PATH}`): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: pathDirs };
  for (const [name, value] of Object.entries(process.env)) {
    if (['HOME', 'USER', 'LANG', 'TMPDIR', 'NODE_EXTRA_CA_CERTS'].includes(name) || /_proxy$/i.test(name)) env[name] = value;
  }
  return { ...env, ...settings };
}

function copyProject(to: string): void {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: PROJECT_ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) {
    const from = path.join(PROJECT_ROOT, f);
    if (!fs.existsSync(from)) continue; // deleted in the working tree
    fs.mkdirSync(path.dirname(path.join(to, f)), { recursive: true });
    fs.cpSync(from, path.join(to, f), { verbatimSymlinks: true });
  }
}

interface Started {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv): Started {
  const child = spawn('npm', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function finished(p: Started, timeoutMs: number): Promise<number | null> {
  const code = await Promise.race([p.exited, sleep(timeoutMs).then(() => 'timeout' as const)]);
  if (code === 'timeout') throw new Error(`npm did not finish within ${timeoutMs} ms:\n${p.output()}`);
  return code;
}

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(250);
  }
}

describe('production install: npm ci --omit=dev, then the production starts (issue 30)', function () {
  this.timeout(600_000);
  let root: string;
  let app: string;
  let model: FakeModel;
  const started: Started[] = [];

  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-production-'));
    app = path.join(root, 'app');
    copyProject(app);
    const install = npm(['ci', '--omit=dev', '--no-audit', '--no-fund'], app, hostEnv({}));
    expect(await finished(install, 480_000), install.output()).to.equal(0);
    expect(fs.existsSync(path.join(app, 'node_modules', 'mocha')), 'devDependencies left out').to.equal(false);
    expect(fs.existsSync(path.join(app, 'node_modules', '.bin', 'node')), 'no `node` package: npm scripts run on the PATH Node').to.equal(false);
    model = await new FakeModel().start();
  });

  after(async () => {
    for (const p of started) if (p.child.pid && p.child.exitCode === null) killTree(p.child.pid);
    await model?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  function start(script: string, settings: Record<string, string>, pathDirs?: string): Started {
    const p = npm(['run', script], app, hostEnv(settings, pathDirs));
    started.push(p);
    return p;
  }

  /** What every production start serves: health, the OIDC discovery, the bootstrap owner, and an agent run through its worker. */
  async function servesAndRuns(url: string, bootstrapToken: string): Promise<void> {
    expect((await fetch(`${url}/api/health`)).status).to.equal(200);
    const discovery = await fetch(`${url}/.well-known/openid-configuration`);
    const discoveryText = await discovery.text();
    expect(discovery.status, discoveryText).to.equal(200);
    expect(JSON.parse(discoveryText).issuer).to.be.a('string');

    const owner = new Client(url);
    const redeemed = await owner.post('/api/auth/bootstrap/redeem', {
      token: bootstrapToken,
      email: uniqueEmail('prod-owner'),
      password: PASSWORD,
      name: 'Prod Owner',
      organizationName: 'Prod Org',
    });
    expect(redeemed.status, redeemed.text).to.equal(201);
    const client = owner.with({ 'X-Org-Id': redeemed.body.organization.id, 'X-Space-Id': redeemed.body.organization.defaultSpaceId });
    await importAgent(client, { name: '@prod/agent', input: { type: 'object' } });
    const launched = await client.post('/api/agents/@prod/agent/run', { input: {} });
    expect(launched.status, launched.text).to.equal(201);
    let run = launched.body;
    for (let i = 0; i < 6 && ['pending', 'running'].includes(run.status); i++) run = (await client.get(`/api/runs/${run.id}?wait=30`)).body;
    expect(run.status, JSON.stringify(run.error)).to.equal('success');
  }

  function settings(databaseUrl: string, port: number, extra: Record<string, string> = {}): Record<string, string> {
    return {
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: stack().temporalAddress,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      NODE_ENV: 'production',
      MODEL_BASE_URL: model.url, // the instance model, served to the bootstrap owner's organization
      MODEL_NAME: 'm',
      EGRESS_ALLOW_INTERNAL_HOSTS: '127.0.0.1',
      SANDBOX_WARM_POOL: '0',
      ...extra,
    };
  }

  it('refuses an older Node and missing settings with a message naming them', async function () {
    const systemNode = execFileSync('sh', ['-c', 'command -v node && node --version'], { env: { PATH: SYSTEM_PATH }, encoding: 'utf8' }).trim();
    const port = await freePort(0);
    if (Number(/v(\d+)/.exec(systemNode)?.[1]) < 24) {
      const old = start('start:prod', settings(stack().databaseUrl, port), SYSTEM_PATH);
      expect(await finished(old, 60_000), old.output()).to.equal(1);
      expect(old.output()).to.include('needs Node.js 24 or newer').and.include(systemNode.split('\n')[1]);
    }
    const { TEMPORAL_ADDRESS: _t, SECRETS_KEY: _s, ...partial } = settings(stack().databaseUrl, port, { DATA_DIR: path.join(root, 'data-refused') });
    const missing = start('start:prod', partial);
    expect(await finished(missing, 60_000), missing.output()).to.equal(1);
    expect(missing.output()).to.include('configuration error: TEMPORAL_ADDRESS, SECRETS_KEY must be set for `npm run start:prod`');
    if (Number(/v(\d+)/.exec(systemNode)?.[1]) >= 24) this.skip(); // no older Node here to refuse
  });

  it('npm run start:prod: migrations, a supervised worker and API serving OIDC and runs; SIGTERM to npm stops them all', async () => {
    const port = await freePort(0);
    const dataDir = path.join(root, 'data-prod');
    const token = `boot_${randomBytes(12).toString('hex')}`;
    const prod = start(
      'start:prod',
      settings(await freshDatabaseOn(stack().databaseUrl), port, { DATA_DIR: dataDir, LOG_FORMAT: 'json', BOOTSTRAP_TOKEN: token }),
    );
    try {
      await until('start:prod ready', () => prod.output().includes('Ready.') || prod.child.exitCode !== null, 240_000);
      expect(prod.child.exitCode, prod.output()).to.equal(null);
      expect(prod.output()).to.match(/Database: applying migrations/);
      await until('worker polling', () => prod.output().includes('"msg":"workers polling"'), 240_000);
      await servesAndRuns(`http://127.0.0.1:${port}`, token);

      const pids = JSON.parse(fs.readFileSync(path.join(dataDir, 'pids.json'), 'utf8')) as Record<string, number>;
      for (const name of ['launcher', 'api', 'worker']) expect(pids[name], name).to.be.a('number');
      const all = [...new Set([...descendants(prod.child.pid!), ...Object.values(pids)])];
      prod.child.kill('SIGTERM'); // npm alone, as `docker stop` signals a container's first process
      await finished(prod, 90_000);
      await until('every process gone', () => all.every((pid) => !alive(pid)), 30_000).catch(() => {
        throw new Error(`left behind: ${all.filter(alive).join(', ')}`);
      });
      expect(prod.output()).to.include('[stop] done');
    } catch (err) {
      console.error(`--- start:prod output ---\n${prod.output()}`);
      throw err;
    }
  });

  it('one process per container: npm run migrate, start:worker and start:api', async () => {
    const port = await freePort(0);
    const env = settings(await freshDatabaseOn(stack().databaseUrl), port);
    const migrate = start('migrate', env);
    expect(await finished(migrate, 120_000), migrate.output()).to.equal(0);
    expect(migrate.output()).to.match(/\d+ migration\(s\) applied/);
    const token = /"token":"(boot_[^"]+)"/.exec(migrate.output())?.[1];
    expect(token, `bootstrap token printed on the empty database:\n${migrate.output()}`).to.be.a('string');

    const worker = start('start:worker', env);
    const api = start('start:api', env);
    try {
      await waitForHealthy(`http://127.0.0.1:${port}/api/health`, 120_000);
      await until('worker polling', () => worker.output().includes('"msg":"workers polling"') || worker.child.exitCode !== null, 240_000);
      expect(worker.child.exitCode, worker.output()).to.equal(null);
      await servesAndRuns(`http://127.0.0.1:${port}`, token!);

      const all = [...descendants(worker.child.pid!), ...descendants(api.child.pid!)];
      worker.child.kill('SIGTERM');
      api.child.kill('SIGTERM');
      await Promise.all([finished(worker, 90_000), finished(api, 90_000)]);
      expect(worker.output()).to.include('"msg":"worker stopped"');
      expect(api.output()).to.include('"msg":"API stopping"');
      await until('every process gone', () => all.every((pid) => !alive(pid)), 30_000).catch(() => {
        throw new Error(`left behind: ${all.filter(alive).join(', ')}`);
      });
    } catch (err) {
      console.error(`--- start:worker output ---\n${worker.output()}\n--- start:api output ---\n${api.output()}`);
      throw err;
    }
  });
});
