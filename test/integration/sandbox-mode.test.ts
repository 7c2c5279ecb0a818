// Issue 28, DESIGN.md 3: no silent fallback. On a worker without bwrap, runs refuse to start with a
// reason naming SANDBOX_MODE, warm sandboxes included; with SANDBOX_MODE=process they run without
// isolation, the worker warning at its start and on every run. Real worker processes whose PATH
// holds no bwrap.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../shared/config.ts';
import { newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { runOnWorkerProcess, spawnWorkerProcess, workerEnv } from '../support/worker.ts';

interface LogLine {
  level: number;
  msg: string;
  runId?: string;
}
const WARN = 40;

describe('SANDBOX_MODE: a worker without bwrap (issue 28)', function () {
  this.timeout(180_000);
  let api: TestApi;
  let model: FakeModel;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let noBwrapPath: string;
  const children = new Set<ChildProcess>();

  /** A worker whose PATH holds no bwrap, and the JSON lines it logs. */
  function workerWithoutBwrap(env: Record<string, string> = {}): { child: ChildProcess; lines: LogLine[] } {
    const child = spawnWorkerProcess({ PATH: noBwrapPath, LOG_LEVEL: 'info', ...env }, { stdout: 'pipe' });
    children.add(child);
    child.once('exit', () => children.delete(child));
    const lines: LogLine[] = [];
    let partial = '';
    child.stdout!.on('data', (d: Buffer) => {
      const parts = (partial + d.toString('utf8')).split('\n');
      partial = parts.pop()!;
      for (const part of parts) {
        try {
          lines.push(JSON.parse(part));
        } catch {} // not a log line (the SDK's own output)
      }
    });
    return { child, lines };
  }

  function runOn(child: ChildProcess, marker: string) {
    model.script(marker, [() => toolCall('output', { answer: marker })]);
    return runOnWorkerProcess(child, org.client, '@mode/agent', { marker });
  }

  before(async () => {
    noBwrapPath = fs.mkdtempSync(path.join(os.tmpdir(), 'path-without-bwrap-'));
    model = await new FakeModel().start();
    api = await startTestApi(workerEnv());
    org = await newOrg(api);
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    await importAgent(org.client, { name: '@mode/agent', runtimeTools: ['output'], input: { type: 'object' } });
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
    fs.rmSync(noBwrapPath, { recursive: true, force: true });
  });

  it('refuses the run with a reason naming SANDBOX_MODE, and starts no warm sandbox unisolated', async () => {
    // The default warm pool (2): before, it filled with unisolated sandboxes and the run took one.
    const { child, lines } = workerWithoutBwrap();
    const run = await runOn(child, 'no-bwrap');
    expect(run.status).to.equal('failed');
    expect(run.error).to.contain('bwrap').and.contain('SANDBOX_MODE=process');
    expect(run.sandboxMode).to.equal(null);
    expect(model.requests.filter((r) => JSON.stringify(r.body.messages).includes('no-bwrap'))).to.have.length(0);
    // Said at the worker's start already, before any run.
    expect(lines.some((l) => l.level > WARN && l.msg.includes('agent runs cannot start on this worker') && l.msg.includes('SANDBOX_MODE=process'))).to.equal(
      true,
    );
  });

  it('runs the agent unisolated with SANDBOX_MODE=process, warning at start and on the run', async () => {
    const { child, lines } = workerWithoutBwrap({ SANDBOX_MODE: 'process' });
    const run = await runOn(child, 'process-mode');
    expect(run.status, run.error).to.equal('success');
    expect(run.result).to.deep.equal({ output: { answer: 'process-mode' } });
    expect(run.sandboxMode).to.equal('process');
    const warnings = lines.filter((l) => l.level === WARN && l.msg.includes('WITHOUT isolation'));
    expect(
      warnings.some((l) => l.msg.startsWith('SANDBOX_MODE=process: agents run WITHOUT isolation') && !l.runId),
      'the warning at start',
    ).to.equal(true);
    expect(
      warnings.some((l) => l.runId === run.id),
      'the warning on the run',
    ).to.equal(true);
  });

  it('stops the boot on a SANDBOX_MODE it does not know, naming it', () => {
    expect(() => loadConfig(workerEnv({ SANDBOX_MODE: 'none' }))).to.throw(ConfigError, /SANDBOX_MODE must be one of bwrap, process/);
  });
});
