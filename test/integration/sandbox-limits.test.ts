// Issue 31, DESIGN.md 9: the ceilings over code an agent runs. A run's cgroup gets pids.max from
// PLATFORM_RUN_LIMITS.agent_pids_ceiling (warm sandboxes' too), and a worker that cannot put
// memory, CPU and pids ceilings on commands refuses runs of agents that list `bash`, naming
// SANDBOX_LIMITS=none, unless the operator set it. SANDBOX_MODE=process stands for a worker
// without ceilings (its agents run outside any cgroup): real worker processes, as the setting is
// one per process.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { missingCeilings } from '../../activities/sandbox/cgroups.ts';
import { findBwrap } from '../../activities/sandbox/spawn.ts';
import { ConfigError, loadConfig } from '../../shared/config.ts';
import { newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { runOnWorkerProcess, spawnWorkerProcess, startTestWorker, workerEnv } from '../support/worker.ts';

/** Where a run's (or warm sandbox's) pids cgroup is, on a cgroup v1 or v2 host. */
function pidsCgroup(name: string): string {
  const v1 = path.join('/sys/fs/cgroup/pids/agent-service', name);
  return fs.existsSync('/sys/fs/cgroup/pids') ? v1 : path.join('/sys/fs/cgroup/agent-service', name);
}

/** A cgroup file's content, or undefined when its group went between listing and reading. */
function readIfThere(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

describe('SANDBOX_LIMITS and agent_pids_ceiling (issue 31)', function () {
  this.timeout(180_000);
  let api: TestApi;
  let model: FakeModel;
  let org: Awaited<ReturnType<typeof newOrg>>;
  const children = new Set<ChildProcess>();

  function worker(env: Record<string, string>): ChildProcess {
    const child = spawnWorkerProcess(env);
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  }

  function runOn(child: ChildProcess, agent: string, marker: string) {
    model.script(marker, [() => toolCall('output', { answer: marker })]);
    return runOnWorkerProcess(child, org.client, agent, { marker });
  }

  before(async () => {
    model = await new FakeModel().start();
    api = await startTestApi(workerEnv());
    org = await newOrg(api);
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    await importAgent(org.client, { name: '@limits/coder', runtimeTools: ['bash', 'output'], input: { type: 'object' }, prompt: 'Run {{runId}}.' });
    await importAgent(org.client, { name: '@limits/plain', runtimeTools: ['output'], input: { type: 'object' }, prompt: 'Run {{runId}}.' });
  });
  afterEach(async () => {
    for (const child of [...children]) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
  after(async () => {
    await api?.close();
    await model?.stop();
  });

  it('refuses a bash agent on a worker without ceilings, naming SANDBOX_LIMITS=none, and runs the others', async () => {
    const child = worker({ SANDBOX_MODE: 'process' });
    const refused = await runOn(child, '@limits/coder', 'no-ceilings');
    expect(refused.status).to.equal('failed');
    expect(refused.error).to.contain('bash').and.contain('memory/CPU/pids').and.contain('SANDBOX_LIMITS=none');
    expect(refused.sandboxMode, 'refused before it was marked running').to.equal(null);
    expect(model.requests.filter((r) => JSON.stringify(r.body.messages).includes('no-ceilings'))).to.have.length(0);
    const plain = await runOn(child, '@limits/plain', 'plain-agent');
    expect(plain.status, plain.error).to.equal('success');
  });

  it('runs a bash agent there with SANDBOX_LIMITS=none', async () => {
    const child = worker({ SANDBOX_MODE: 'process', SANDBOX_LIMITS: 'none' });
    const run = await runOn(child, '@limits/coder', 'limits-none');
    expect(run.status, run.error).to.equal('success');
    expect(run.sandboxMode).to.equal('process');
  });

  it("sets the run's and the warm sandboxes' pids.max to agent_pids_ceiling", async function () {
    if (!findBwrap() || missingCeilings().length > 0) this.skip();
    const limits = JSON.stringify({ agent_pids_ceiling: 77 });
    let seen: string | undefined;
    model.script('pids-ceiling', [
      (req) => {
        const runId = /run_[A-Za-z0-9]+/.exec(JSON.stringify(req.body.messages))![0];
        seen = fs.readFileSync(path.join(pidsCgroup(runId), 'pids.max'), 'utf8').trim();
        return toolCall('output', { answer: 'ok' });
      },
    ]);
    // Without warm sandboxes, the run's cgroup is named after it.
    const cold = await startTestWorker({ PLATFORM_RUN_LIMITS: limits, SANDBOX_WARM_POOL: '0' });
    try {
      const run = await org.client.post('/api/agents/@limits/coder/run', { input: { marker: 'pids-ceiling' } });
      const done = await org.client.get(`/api/runs/${run.body.id}?wait=50`);
      expect(done.body.status, done.body.error).to.equal('success');
      expect(seen).to.equal('77');
    } finally {
      await cold.stop();
    }
    // A worker process of its own: its pid names its warm cgroups, apart from the suite's worker's.
    const warm = worker({ PLATFORM_RUN_LIMITS: limits, SANDBOX_WARM_POOL: '1', WORKER_MAX_CONCURRENT_RUNS: '1' });
    try {
      const parent = path.dirname(pidsCgroup('x'));
      let ceilings: string[] = [];
      // Made by the pool as the worker starts: the folder first, its pids.max a moment later.
      for (let i = 0; i < 600 && (ceilings.length === 0 || ceilings.some((c) => c !== '77')); i++) {
        ceilings = fs
          .readdirSync(parent)
          .filter((name) => name.startsWith(`warm-${warm.pid}-`))
          .map((name) => readIfThere(path.join(parent, name, 'pids.max')))
          .filter((c) => c !== undefined);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(ceilings).to.deep.equal(['77']);
    } finally {
      if (warm.exitCode === null && warm.signalCode === null) {
        warm.kill('SIGTERM');
        await once(warm, 'exit');
      }
    }
  });

  it('stops the boot on a SANDBOX_LIMITS it does not know, or a pids ceiling that is not a positive integer', () => {
    expect(loadConfig(workerEnv()).sandboxLimits).to.equal('required');
    expect(loadConfig(workerEnv()).platformRunLimits.agent_pids_ceiling).to.equal(256);
    expect(() => loadConfig(workerEnv({ SANDBOX_LIMITS: 'off' }))).to.throw(ConfigError, /SANDBOX_LIMITS must be one of required, none/);
    expect(() => loadConfig(workerEnv({ PLATFORM_RUN_LIMITS: '{"agent_pids_ceiling":0}' }))).to.throw(ConfigError, /PLATFORM_RUN_LIMITS\.agent_pids_ceiling/);
  });
});
