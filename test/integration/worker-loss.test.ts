// DESIGN.md section 2: a worker killed with SIGKILL mid-run leaves no run stuck in `running`;
// the missed heartbeat ends it `failed` with a readable reason.
import { once } from 'node:events';
import { expect } from 'chai';
import { newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { spawnWorkerProcess, startTestWorker, workerEnv } from '../support/worker.ts';

describe('losing the worker mid-run', function () {
  this.timeout(90_000);
  let api: TestApi;
  let model: FakeModel;
  let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined;

  before(async () => {
    model = await new FakeModel().start();
    api = await startTestApi(workerEnv());
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await model?.stop();
  });

  it('ends the run `failed` within a minute once another worker is there', async () => {
    const org = await newOrg(api);
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    await importAgent(org.client, { name: '@loss/agent', timeout: 600 });
    let modelCalled!: () => void;
    const called = new Promise<void>((r) => {
      modelCalled = r;
    });
    model.setFallback(() => {
      modelCalled();
      return new Promise((r) => setTimeout(() => r(toolCall('output', {})), 120_000));
    });
    const child = spawnWorkerProcess();
    const run = await org.client.post('/api/agents/@loss/agent/run', { input: {} });
    await called;
    expect((await org.client.get(`/api/runs/${run.body.id}`)).body.status).to.equal('running');
    const killedAt = Date.now();
    child.kill('SIGKILL');
    await once(child, 'exit');
    worker = await startTestWorker();
    const done = await org.client.get(`/api/runs/${run.body.id}?wait=55`);
    expect(done.body.status).to.equal('failed');
    expect(done.body.error).to.contain('stopped responding');
    expect(Date.now() - killedAt).to.be.lessThan(60_000);
  });
});
