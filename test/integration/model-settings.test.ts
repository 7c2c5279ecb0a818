// Organization-level model settings (issue 17): testing model configurations with a real call,
// OpenRouter's model list, model provider credentials, and outbound proxies that the model
// calls (tests and runs) go through. The provider, OpenRouter and the proxy are local servers
// started here; every response is searched for the secrets handed out.
import { Connection, Client as TemporalClient } from '@temporalio/client';
import { expect } from 'chai';
import { createLogger } from '../../shared/log.ts';
import { type Client, newMember, newOrg, type Res, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, type RecordedRequest, toolCall } from '../support/fake-model.ts';
import { closedPort, ForwardProxy } from '../support/forward-proxy.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { stack } from '../support/stack.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

const MODEL_KEY = 'sk-model-secret-4711';
const CRED_KEY = 'sk-cred-secret-0815';
const BAD_KEY = 'sk-bad-key-1234';
const PROXY_USER = 'proxyuser';
const PROXY_PASSWORD = 'pr0xy-pa55-word';
const SECRETS = [MODEL_KEY, CRED_KEY, BAD_KEY, PROXY_PASSWORD];

/** The fake provider: models lists, one-token test completions, and run completions. */
function provider(req: RecordedRequest): unknown {
  const auth = String(req.headers.authorization ?? req.headers['x-api-key'] ?? '');
  // Like OpenAI, a refused key is echoed back (partly, here whole): the service must redact it.
  if (auth.includes(BAD_KEY)) return { status: 401, body: { error: { message: `Incorrect API key provided: ${BAD_KEY}` } } };
  if (req.path === '/api/v1/models') {
    return {
      data: [
        { id: 'openai/gpt-test', name: 'GPT Test', description: 'a model', context_length: 128000, pricing: { prompt: '0.0000025', completion: '0.00001' } },
        { id: 'openrouter/auto', name: 'Auto', context_length: 2000000, pricing: { prompt: '-1', completion: '-1' } },
      ],
    };
  }
  if (req.path === '/models' || req.path === '/v1/models') return { data: [{ id: 'model-a', display_name: 'Model A' }, { id: 'model-b' }] };
  if (req.body.max_tokens === 1 && req.path === '/v1/messages') return { id: 'msg_1', model: req.body.model, content: [{ type: 'text', text: 'p' }] };
  if (req.body.max_tokens === 1) return { id: 'cmpl', model: `${req.body.model}-2026`, choices: [{ index: 0, message: { role: 'assistant', content: 'p' } }] };
  return toolCall('output', {});
}

describe('model settings: tests, OpenRouter, provider credentials, proxies', function () {
  this.timeout(60_000);
  let api: TestApi;
  let fake: FakeModel;
  let proxy: ForwardProxy;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  const seen: string[] = [];
  /** Every log line of the API and the worker, at debug level, searched for the secrets too. */
  const logged: string[] = [];
  const capture = createLogger('debug', 'model-settings', { write: (line: string) => void logged.push(line) });

  /** Every answer is kept, to search for secrets at the end. */
  function track(client: Client): Client {
    const request = client.request.bind(client);
    client.request = async <T = any>(method: string, path: string, opts = {}): Promise<Res<T>> => {
      const res = await request<T>(method, path, opts);
      seen.push(`${[...res.headers].join('\n')}\n${res.text}`);
      return res;
    };
    return client;
  }
  async function org(tag = 'owner') {
    const o = await newOrg(api, tag);
    return { ...o, client: track(o.client) };
  }

  before(async () => {
    fake = await new FakeModel().start();
    fake.setFallback(provider);
    proxy = await new ForwardProxy(`${PROXY_USER}:${PROXY_PASSWORD}`).start();
    api = await startTestApi(workerEnv({ OPENROUTER_API_URL: `${fake.url}/api/v1` }), [], capture);
    worker = await startTestWorker({}, capture);
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await proxy?.stop();
    await fake?.stop();
    for (const text of seen) for (const s of SECRETS) expect(text, 'a secret in a response').not.to.contain(s);
    expect(seen.length).to.be.greaterThan(40);
    for (const line of logged) for (const s of SECRETS) expect(line, 'a secret in a log line').not.to.contain(s);
    expect(logged.length, 'the API and the worker logged').to.be.greaterThan(10);
  });

  it('tests a model configuration, unsaved and saved, with one real minimal call', async () => {
    const o = await org();
    const ok = await o.client.post('/api/models/test', { provider: 'openai-compatible', baseUrl: fake.url, model: 'gpt-x', apiKey: MODEL_KEY });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body).to.include({ object: 'model_test', ok: true, status: 200, error: null, model: 'gpt-x-2026' });
    expect(ok.body.latencyMs).to.be.a('number');
    expect(ok.headers.get('ratelimit-policy')).to.equal('5;w=60');
    const sent = fake.requests.at(-1)!;
    expect(sent.path).to.equal('/chat/completions');
    expect(sent.body).to.deep.include({ model: 'gpt-x', max_tokens: 1 });
    expect(sent.headers.authorization).to.equal(`Bearer ${MODEL_KEY}`);

    const refused = await o.client.post('/api/models/test', { provider: 'openai-compatible', baseUrl: fake.url, model: 'gpt-x', apiKey: BAD_KEY });
    expect(refused.body).to.include({ ok: false, status: 401 });
    expect(refused.body.error).to.contain('HTTP 401').and.contain('Incorrect API key provided: [redacted]');

    const anthropic = await o.client.post('/api/models/test', { provider: 'anthropic', baseUrl: fake.url, model: 'claude-x', apiKey: MODEL_KEY });
    expect(anthropic.body).to.include({ ok: true, model: 'claude-x' });
    expect(fake.requests.at(-1)!.path).to.equal('/v1/messages');
    expect(fake.requests.at(-1)!.headers['x-api-key']).to.equal(MODEL_KEY);

    const blocked = await o.client.post('/api/models/test', { provider: 'openai-compatible', baseUrl: 'http://169.254.169.254/v1', model: 'm' });
    expectProblem(blocked, 400, 'validation_failed');
    expect(blocked.body.errors[0].field).to.equal('baseUrl');
    expectProblem(await o.client.post('/api/models/test', { provider: 'openai-compatible', baseUrl: fake.url }), 400, 'validation_failed');

    // Saved: its own key; a provider that does not answer is a clear failure, not an error.
    const saved = await o.client.post('/api/models', { name: 'saved', provider: 'openai-compatible', baseUrl: fake.url, model: 'gpt-y', apiKey: MODEL_KEY });
    const savedTest = await o.client.post(`/api/models/${saved.body.id}/test`);
    expect(savedTest.body).to.include({ object: 'model_test', ok: true, model: 'gpt-y-2026' });
    expect(fake.requests.at(-1)!.headers.authorization).to.equal(`Bearer ${MODEL_KEY}`);
    const dead = await o.client.post('/api/models', {
      name: 'dead',
      provider: 'openai-compatible',
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      model: 'm',
    });
    const deadTest = await o.client.post(`/api/models/${dead.body.id}/test`);
    expect(deadTest.body).to.include({ ok: false, status: null });
    expect(deadTest.body.error).to.match(/^No answer: .*ECONNREFUSED/);

    const other = await org('other');
    expectProblem(await other.client.post(`/api/models/${saved.body.id}/test`), 404, 'not_found');
    const member = await newMember(api, o);
    expectProblem(await track(member.client).post(`/api/models/${saved.body.id}/test`), 403, 'forbidden');
  });

  it("lists OpenRouter's models from OPENROUTER_API_URL; 502 when it cannot be reached", async () => {
    const o = await org();
    const res = await o.client.get('/api/models/openrouter');
    expect(res.status, res.text).to.equal(200);
    expect(res.headers.get('ratelimit-policy')).to.equal('10;w=60');
    expect(res.body).to.deep.equal({
      object: 'list',
      data: [
        { id: 'openai/gpt-test', name: 'GPT Test', description: 'a model', contextLength: 128000, inputCostPerMTok: 2.5, outputCostPerMTok: 10 },
        { id: 'openrouter/auto', name: 'Auto', description: '', contextLength: 2000000, inputCostPerMTok: null, outputCostPerMTok: null },
      ],
    });
    expectProblem(await o.client.get('/api/models/openrouter?limit=3'), 400, 'validation_failed');

    const deadUrl = `http://127.0.0.1:${await closedPort()}/api/v1`;
    const offline = await startTestApi(workerEnv({ OPENROUTER_API_URL: deadUrl }));
    try {
      const o2 = await newOrg(offline);
      const down = await track(o2.client).get('/api/models/openrouter');
      expectProblem(down, 502, 'provider_unreachable');
      expect(down.body.detail).to.contain(`${deadUrl}/models`).and.contain('ECONNREFUSED');
    } finally {
      await offline.close();
    }
  });

  it('keeps model provider credentials write-only and encrypted; tests, discovers, and lends them to models', async () => {
    const o = await org();
    const created = await o.client.post('/api/model-provider-credentials', {
      name: 'main',
      provider: 'openai-compatible',
      baseUrl: `${fake.url}/`,
      apiKey: CRED_KEY,
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({ object: 'model_provider_credential', name: 'main', provider: 'openai-compatible', baseUrl: fake.url, hasApiKey: true });
    expect(created.body.id).to.match(/^mpc_/);
    const id = created.body.id;
    const row = await api.knex('model_provider_credentials').where({ id }).first();
    expect(row.api_key_enc).to.match(/^v1\./).and.not.contain(CRED_KEY);
    expect((await o.client.get('/api/model-provider-credentials')).body.data.map((c: any) => c.id)).to.deep.equal([id]);
    expect((await o.client.get(`/api/model-provider-credentials/${id}`)).body).to.deep.equal(created.body);
    expectProblem(
      await o.client.post('/api/model-provider-credentials', { name: 'main', provider: 'anthropic', baseUrl: fake.url, apiKey: 'x-1234' }),
      409,
      'conflict',
    );
    expectProblem(
      await o.client.post('/api/model-provider-credentials', { name: 'nokey', provider: 'anthropic', baseUrl: fake.url }),
      400,
      'validation_failed',
    );
    const blocked = await o.client.post('/api/model-provider-credentials', {
      name: 'meta',
      provider: 'anthropic',
      baseUrl: 'http://169.254.169.254',
      apiKey: 'x-1234',
    });
    expectProblem(blocked, 400, 'validation_failed');

    // Tests list the provider's models with the key.
    const unsaved = await o.client.post('/api/model-provider-credentials/test', { provider: 'openai-compatible', baseUrl: fake.url, apiKey: CRED_KEY });
    expect(unsaved.body).to.deep.include({ object: 'credential_test', ok: true, status: 200, error: null, modelCount: 2 });
    expect(fake.requests.at(-1)!).to.deep.include({ path: '/models' });
    expect(fake.requests.at(-1)!.headers.authorization).to.equal(`Bearer ${CRED_KEY}`);
    const bad = await o.client.post('/api/model-provider-credentials/test', { provider: 'anthropic', baseUrl: fake.url, apiKey: BAD_KEY });
    expect(bad.body).to.include({ ok: false, status: 401, modelCount: null });
    expect(bad.body.error).to.contain('[redacted]');
    expect((await o.client.post(`/api/model-provider-credentials/${id}/test`)).body).to.include({ ok: true, modelCount: 2 });

    // Discovery: saved or unsaved; a refusal is a 502 naming the provider's answer.
    const found = await o.client.post('/api/model-provider-credentials/discover', { credentialId: id });
    expect(found.status, found.text).to.equal(200);
    expect(found.body).to.deep.equal({
      object: 'list',
      data: [
        { id: 'model-a', name: 'Model A' },
        { id: 'model-b', name: 'model-b' },
      ],
    });
    expect(found.headers.get('ratelimit-policy')).to.equal('6;w=60');
    const anth = await o.client.post('/api/model-provider-credentials/discover', { provider: 'anthropic', baseUrl: fake.url, apiKey: CRED_KEY });
    expect(anth.body.data).to.have.length(2);
    expect(fake.requests.at(-1)!.path).to.equal('/v1/models');
    const refused = await o.client.post('/api/model-provider-credentials/discover', { provider: 'openai-compatible', baseUrl: fake.url, apiKey: BAD_KEY });
    expectProblem(refused, 502, 'provider_unreachable');
    expect(refused.body.detail).to.contain('HTTP 401');

    // A model that uses the credential: provider, base URL and key come from it.
    expectProblem(
      await o.client.post('/api/models', { name: 'mixed', credentialId: id, baseUrl: 'https://elsewhere.example', model: 'm' }),
      400,
      'validation_failed',
    );
    const model = await o.client.post('/api/models', { name: 'via-cred', credentialId: id, model: 'gpt-c' });
    expect(model.status, model.text).to.equal(201);
    expect(model.body).to.include({ credentialId: id, provider: 'openai-compatible', baseUrl: fake.url, hasApiKey: true, proxyId: null });
    expect((await o.client.post(`/api/models/${model.body.id}/test`)).body).to.include({ ok: true });
    expect(fake.requests.at(-1)!.headers.authorization).to.equal(`Bearer ${CRED_KEY}`);
    const moved = await o.client.patch(`/api/model-provider-credentials/${id}`, { provider: 'anthropic', apiKey: MODEL_KEY });
    expect(moved.body).to.include({ provider: 'anthropic', hasApiKey: true });
    expect((await o.client.get('/api/models')).body.data[0]).to.include({ provider: 'anthropic', baseUrl: fake.url });
    expectProblem(await o.client.patch(`/api/models/${model.body.id}`, { apiKey: 'sk-other-1' }), 400, 'validation_failed');
    expectProblem(await o.client.delete(`/api/model-provider-credentials/${id}`), 409, 'conflict');

    // Tenancy and scopes.
    const other = await org('other');
    expectProblem(await other.client.get(`/api/model-provider-credentials/${id}`), 404, 'not_found');
    expectProblem(await other.client.post(`/api/model-provider-credentials/${id}/test`), 404, 'not_found');
    expectProblem(await other.client.post('/api/models', { name: 'steal', credentialId: id, model: 'm' }), 404, 'not_found');
    expectProblem(await other.client.post('/api/model-provider-credentials/discover', { credentialId: id }), 404, 'not_found');
    const member = track((await newMember(api, o)).client);
    expect((await member.get('/api/model-provider-credentials')).status).to.equal(200);
    expectProblem(
      await member.post('/api/model-provider-credentials', { name: 'x', provider: 'anthropic', baseUrl: fake.url, apiKey: 'k-1234' }),
      403,
      'forbidden',
    );

    expect((await o.client.patch(`/api/models/${model.body.id}`, { credentialId: null })).body).to.include({ credentialId: null, hasApiKey: false });
    expect((await o.client.delete(`/api/model-provider-credentials/${id}`)).status).to.equal(204);
    expectProblem(await o.client.get(`/api/model-provider-credentials/${id}`), 404, 'not_found');
  });

  it('sends model tests and a real run through the organization proxy; its credentials stay secret', async () => {
    const o = await org();
    const proxyUrl = `http://${PROXY_USER}:${PROXY_PASSWORD}@${proxy.url.slice('http://'.length)}`;
    const created = await o.client.post('/api/proxies', { name: 'corp', url: proxyUrl, isDefault: true });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({ object: 'proxy', name: 'corp', url: proxy.url, hasCredentials: true, isDefault: true });
    expect(created.body.id).to.match(/^prx_/);
    const row = await api.knex('proxies').where({ id: created.body.id }).first();
    expect(row.url_enc).to.match(/^v1\./).and.not.contain(PROXY_PASSWORD);
    expect(JSON.stringify(row)).not.to.contain(PROXY_PASSWORD);
    expect((await o.client.get(`/api/proxies/${created.body.id}`)).body).to.deep.equal(created.body);
    const expectedAuth = `Basic ${Buffer.from(`${PROXY_USER}:${PROXY_PASSWORD}`).toString('base64')}`;
    const fakeHost = fake.url.slice('http://'.length);

    // The proxy test: a real GET through it (by default to OpenRouter's list).
    proxy.requests.length = 0;
    const tested = await o.client.post(`/api/proxies/${created.body.id}/test`, {});
    expect(tested.body).to.include({ object: 'proxy_test', ok: true, status: 200, error: null, url: `${fake.url}/api/v1/models` });
    expect(proxy.requests).to.deep.equal([{ method: 'CONNECT', target: fakeHost, proxyAuthorization: expectedAuth }]);
    const wrong = await o.client.post('/api/proxies', { name: 'wrong', url: `http://${PROXY_USER}:nope@${proxy.url.slice(7)}` });
    expect(wrong.body.url).to.equal(proxy.url);
    const refused = await o.client.post(`/api/proxies/${wrong.body.id}/test`, { url: `${fake.url}/models` });
    expect(refused.body).to.include({ ok: false, status: null });
    expect(refused.body.error).to.contain('407');

    // A model test uses the default proxy.
    proxy.requests.length = 0;
    const m = await o.client.post('/api/models', {
      name: 'proxied',
      provider: 'openai-compatible',
      baseUrl: fake.url,
      model: 'gpt-p',
      apiKey: MODEL_KEY,
      isDefault: true,
    });
    expect((await o.client.post(`/api/models/${m.body.id}/test`)).body).to.include({ ok: true });
    expect(proxy.requests).to.have.length(1);
    expect(proxy.requests[0]).to.include({ method: 'CONNECT', target: fakeHost });
    // A model may name its own proxy: the failing one refuses the test.
    const own = await o.client.patch(`/api/models/${m.body.id}`, { proxyId: wrong.body.id });
    expect(own.body.proxyId).to.equal(wrong.body.id);
    const viaWrong = await o.client.post(`/api/models/${m.body.id}/test`);
    expect(viaWrong.body).to.include({ ok: false });
    expect(viaWrong.body.error).to.contain('407');
    expectProblem(await o.client.delete(`/api/proxies/${wrong.body.id}`), 409, 'conflict');
    await o.client.patch(`/api/models/${m.body.id}`, { proxyId: null });

    // A run: every model call goes through the proxy, with the key injected behind it.
    proxy.requests.length = 0;
    await importAgent(o.client, { name: '@proxied/agent' });
    fake.script('through-the-proxy', [() => toolCall('log', { level: 'info', message: 'hi' }), () => toolCall('output', { via: 'proxy' })]);
    const run = await o.client.post('/api/agents/@proxied/agent/run', { input: { marker: 'through-the-proxy' } });
    const done = await o.client.get(`/api/runs/${run.body.id}?wait=30`);
    expect(done.body.status, done.body.error).to.equal('success');
    const calls = fake.requests.filter((r) => JSON.stringify(r.body).includes('through-the-proxy'));
    expect(calls).to.have.length(2);
    expect(calls[0].headers.authorization).to.equal(`Bearer ${MODEL_KEY}`);
    expect(proxy.requests.length).to.be.within(1, 2);
    for (const p of proxy.requests) expect(p).to.deep.equal({ method: 'CONNECT', target: fakeHost, proxyAuthorization: expectedAuth });
    // The run's Temporal history (payloads decoded) carries ids, never the key or the proxy password.
    const connection = await Connection.connect({ address: stack().temporalAddress });
    try {
      const history = await new TemporalClient({ connection }).workflow.getHandle(run.body.id).fetchHistory();
      // Payload bytes come as base64: decoded, so the search reads what the payloads say.
      const text = JSON.stringify(history).replace(/"data":"([A-Za-z0-9+/=]*)"/g, (_m, b64: string) =>
        JSON.stringify(Buffer.from(b64, 'base64').toString('utf8')),
      );
      expect(text).to.contain('timeoutSeconds'); // the workflow's input payload, decoded: the search reads payloads
      for (const s of SECRETS) expect(text, 'a secret in Temporal history').not.to.contain(s);
    } finally {
      await connection.close();
    }

    // Validation, tenancy, scopes.
    expectProblem(await o.client.post('/api/proxies', { name: 'ftp', url: 'ftp://127.0.0.1:21' }), 400, 'validation_failed');
    const meta = await o.client.post('/api/proxies', { name: 'meta', url: 'http://169.254.169.254:3128' });
    expectProblem(meta, 400, 'validation_failed');
    expect(meta.body.errors[0].field).to.equal('url');
    expectProblem(await o.client.post('/api/proxies', { name: 'corp', url: proxy.url }), 409, 'conflict');
    const other = await org('other');
    expectProblem(await other.client.get(`/api/proxies/${created.body.id}`), 404, 'not_found');
    expectProblem(await other.client.post(`/api/proxies/${created.body.id}/test`, {}), 404, 'not_found');
    expectProblem(
      await other.client.post('/api/models', { name: 'x', provider: 'anthropic', baseUrl: fake.url, model: 'm', proxyId: created.body.id }),
      404,
      'not_found',
    );
    const member = track((await newMember(api, o)).client);
    expect((await member.get('/api/proxies')).body.data).to.have.length(2);
    expectProblem(await member.post('/api/proxies', { name: 'x', url: proxy.url }), 403, 'forbidden');
    expectProblem(await member.delete(`/api/proxies/${created.body.id}`), 403, 'forbidden');

    // Without the default proxy, calls go directly again.
    await o.client.patch(`/api/proxies/${created.body.id}`, { isDefault: false });
    proxy.requests.length = 0;
    expect((await o.client.post(`/api/models/${m.body.id}/test`)).body).to.include({ ok: true });
    expect(proxy.requests).to.deep.equal([]);
    expect((await o.client.delete(`/api/proxies/${created.body.id}`)).status).to.equal(204);
  });
});
