// Model and proxy calls through an organization's outbound proxy (issue 30): behind a corporate
// proxy the service's own host often cannot resolve the names it calls; the proxy does. Through
// a proxy, the egress policy checks the proxy's address and the target's literal IP (if it is
// one) and leaves name resolution to the proxy. The proxy, the provider and the worker are
// real local processes; `api.example.invalid` resolves nowhere (RFC 6761) except in the proxy.
import { expect } from 'chai';
import { type Client, newKey, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { ForwardProxy } from '../support/forward-proxy.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

const HIDDEN = 'api.example.invalid';

describe('egress through an outbound proxy', function () {
  this.timeout(90_000);
  let api: TestApi;
  let fake: FakeModel;
  let proxy: ForwardProxy;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let proxyId: string;
  /** The fake provider under a name only the proxy resolves. */
  let hiddenUrl: string;

  before(async () => {
    fake = await new FakeModel().start();
    fake.setFallback((req) =>
      req.path === '/models'
        ? { data: [{ id: 'm' }] }
        : { id: 'c', model: `${req.body.model}-via-proxy`, choices: [{ index: 0, message: { role: 'assistant', content: 'p' } }] },
    );
    proxy = await new ForwardProxy().start();
    proxy.hosts.set(HIDDEN, '127.0.0.1');
    hiddenUrl = `http://${HIDDEN}:${new URL(fake.url).port}`;
    // The proxy listens on 127.0.0.1, which EGRESS_ALLOW_INTERNAL_HOSTS allows (workerEnv).
    api = await startTestApi(workerEnv());
    worker = await startTestWorker();
    org = await newOrg(api, 'egress-proxy');
    const created = await org.client.post('/api/proxies', { name: 'corp', url: proxy.url, isDefault: true });
    expect(created.status, created.text).to.equal(201);
    proxyId = created.body.id;
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await proxy?.stop();
    await fake?.stop();
  });

  it('reaches the proxy for a target whose name does not resolve on the service host (proxy test, model test)', async () => {
    proxy.requests.length = 0;
    const tested = await org.client.post(`/api/proxies/${proxyId}/test`, { url: `${hiddenUrl}/models` });
    expect(tested.body, tested.text).to.include({ object: 'proxy_test', ok: true, status: 200, error: null });
    expect(proxy.requests).to.deep.equal([{ method: 'CONNECT', target: `${HIDDEN}:${new URL(fake.url).port}`, proxyAuthorization: undefined }]);

    // An unsaved model test through the organization's default proxy, then through a named one.
    proxy.requests.length = 0;
    const unsaved = await org.client.post('/api/models/test', { provider: 'openai-compatible', baseUrl: hiddenUrl, model: 'gpt-h' });
    expect(unsaved.body, unsaved.text).to.include({ object: 'model_test', ok: true, model: 'gpt-h-via-proxy' });
    const named = await org.client.post('/api/models/test', { provider: 'openai-compatible', baseUrl: hiddenUrl, model: 'gpt-h', proxyId });
    expect(named.body, named.text).to.include({ ok: true });
    expect(proxy.requests.map((r) => r.target)).to.deep.equal([`${HIDDEN}:${new URL(fake.url).port}`, `${HIDDEN}:${new URL(fake.url).port}`]);
  });

  it('saves such a model, tests it and runs an agent on it through the proxy', async () => {
    const saved = await org.client.post('/api/models', { name: 'hidden', provider: 'openai-compatible', baseUrl: hiddenUrl, model: 'gpt-h', isDefault: true });
    expect(saved.status, saved.text).to.equal(201);
    proxy.requests.length = 0;
    expect((await org.client.post(`/api/models/${saved.body.id}/test`)).body).to.include({ ok: true, model: 'gpt-h-via-proxy' });
    expect(proxy.requests).to.have.length(1);

    await importAgent(org.client, { name: '@egress/hidden' });
    fake.script('behind-the-proxy', [() => toolCall('output', { via: 'proxy' })]);
    proxy.requests.length = 0;
    const run = await org.client.post('/api/agents/@egress/hidden/run', { input: { marker: 'behind-the-proxy' } });
    expect(run.status, run.text).to.equal(201);
    const done = await org.client.get(`/api/runs/${run.body.id}?wait=30`);
    expect(done.body.status, done.body.error).to.equal('success');
    expect(proxy.requests.length).to.be.at.least(1);
    for (const r of proxy.requests) expect(r.target).to.equal(`${HIDDEN}:${new URL(fake.url).port}`);
  });

  it('still refuses a literal private or reserved address, and loopback names, through the proxy; the proxy is never asked', async () => {
    let caller: Client = org.client;
    proxy.requests.length = 0;
    const urls = [
      'http://10.0.0.7/models',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]:8080/models',
      'http://[::ffff:10.0.0.7]/models',
      'http://localhost:8080/models',
      'http://db.localhost/models',
    ];
    for (const [i, url] of urls.entries()) {
      // Tests are limited to 5 a minute per identity: a fresh API key every few.
      if (i % 4 === 0) caller = (await newKey(api, org.client, { name: `prober ${i}` })).client;
      const res = await caller.post(`/api/proxies/${proxyId}/test`, { url });
      expect(res.body, `${url}: ${res.text}`).to.include({ ok: false, status: null });
      expect(res.body.error, url).to.match(/^Refused by the egress policy: /);
    }
    const model = await org.client.post('/api/models/test', { provider: 'openai-compatible', baseUrl: 'http://10.0.0.7/v1', model: 'm' });
    expectProblem(model, 400, 'validation_failed');
    expect(model.body.errors[0].field).to.equal('baseUrl');
    expectProblem(
      await org.client.post('/api/models', { name: 'meta', provider: 'openai-compatible', baseUrl: 'http://169.254.169.254/v1', model: 'm' }),
      400,
      'validation_failed',
    );
    expect(proxy.requests).to.deep.equal([]);
  });

  it('without a proxy, a name that does not resolve is still refused before any call', async () => {
    const direct = await newOrg(api, 'egress-direct');
    const res = await direct.client.post('/api/models/test', { provider: 'openai-compatible', baseUrl: hiddenUrl, model: 'm' });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors[0].message).to.contain('does not resolve');
  });
});
