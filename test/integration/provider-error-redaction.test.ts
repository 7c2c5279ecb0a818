// Issue 28: a model provider's error text may echo what it was sent (a 401 quoting the
// Authorization header). It reaches the run's error, its log, its events and the LLM proxy's
// callers with the model's key replaced by `[redacted]`, as in `api_call` results.
import { expect } from 'chai';
import { newKey, newOrg } from '../support/api.ts';
import type { RecordedRequest } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { type RunServices, startRunServices } from '../support/run-services.ts';
import { Feed } from '../support/sse-feed.ts';

const KEY = 'sk-live-provider-key-0123456789abcdef';
const ANTHROPIC_KEY = 'sk-ant-provider-key-9876543210fedcba';

/**
 * A provider refusing the key, quoting the credential header it received twice: once early,
 * once across the 300th character of its answer, where a run's error cuts it.
 */
function refuseEchoing(req: RecordedRequest) {
  const sent = String(req.headers.authorization ?? req.headers['x-api-key']);
  const key = sent.replace(/^Bearer /, '');
  const answer = (pad: string) => ({ error: { message: `Incorrect API key provided: ${sent}.${pad} Again: ${sent}`, type: 'invalid_request_error' } });
  // The second key starts at character 288: the first 12 of its characters are within the cut.
  return { status: 401, body: answer('.'.repeat(288 - JSON.stringify(answer('')).lastIndexOf(key))) };
}

describe('provider errors are redacted', function () {
  this.timeout(90_000);
  let services: RunServices;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    services = await startRunServices({ output: { ok: true } });
    org = await newOrg(services.api, 'redact');
    const created = await org.client.post('/api/models', {
      name: 'fake',
      provider: 'openai-compatible',
      baseUrl: services.model.url,
      model: 'm',
      apiKey: KEY,
      isDefault: true,
    });
    expect(created.status, created.text).to.equal(201);
    const claude = await org.client.post('/api/models', {
      name: 'claude',
      provider: 'anthropic',
      baseUrl: services.model.url,
      model: 'c',
      apiKey: ANTHROPIC_KEY,
    });
    expect(claude.status, claude.text).to.equal(201);
    await importAgent(org.client, { name: '@redact/agent', input: { type: 'object' } });
    const hook = await org.client.post('/api/webhooks', {
      level: 'space',
      spaceId: org.defaultSpaceId,
      url: services.receiver.url('/events'),
      events: ['run.failed'],
    });
    expect(hook.status, hook.text).to.equal(201);
  });
  after(async () => {
    await services?.stop();
  });

  it('a provider error echoing the key reaches the run redacted: its error, its log and its events', async () => {
    services.model.script('echo-key', [refuseEchoing]);
    const { key } = await newKey(services.api, org.client, { name: 'redact feed' });
    const feed = await new Feed(`${services.api.url}/api/realtime/runs?token=${key}`).opened();
    try {
      const launched = await org.client.post('/api/agents/@redact/agent/run', { input: { marker: 'echo-key' } });
      expect(launched.status, launched.text).to.equal(201);
      const id = launched.body.id as string;
      const done = await org.client.get(`/api/runs/${id}?wait=30`);
      // The provider did get the key and did echo it.
      expect(services.model.requests.some((r) => r.headers.authorization === `Bearer ${KEY}`)).to.equal(true);

      expect(done.body.status).to.equal('failed');
      const error = done.body.error as string;
      expect(error).to.match(
        /^The model provider answered HTTP 401: \{"error":\{"message":"Incorrect API key provided: Bearer \[redacted\]\.{10,} Again: Bearer \[redac/,
      );
      expect(error, 'not even the start of the key').not.to.contain(KEY.slice(0, 8));

      const logs = await org.client.get(`/api/runs/${id}/logs`);
      expect(logs.text).to.contain('[redacted]');
      expect(logs.text).not.to.contain(KEY.slice(0, 8));

      await feed.waitFor((f) => f.event === 'run_update' && f.data.id === id && f.data.status === 'failed', 20_000, 'the failed run_update');
      await feed.waitFor((f) => f.event === 'run_log' && f.data.runId === id && f.data.level === 'error', 20_000, 'the error log entry');
      const frames = JSON.stringify(feed.of(id));
      expect(frames).to.contain('[redacted]');
      expect(frames).not.to.contain(KEY.slice(0, 8));

      const [delivery] = (await services.receiver.waitFor(1, 30_000)).filter((r) => r.body.includes(id));
      expect(delivery, 'the run.failed delivery').to.exist;
      expect(JSON.parse(delivery.body).type).to.equal('run.failed');
      expect(delivery.body).to.contain('[redacted]');
      expect(delivery.body).not.to.contain(KEY.slice(0, 8));
    } finally {
      feed.close();
    }
  });

  it("a saved model's test names the provider's error without any of its key", async () => {
    services.model.script('ping', [refuseEchoing]); // the test call's one user word
    const id = (await org.client.get('/api/models')).body.data.find((m: any) => m.name === 'fake').id;
    const res = await org.client.post(`/api/models/${id}/test`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.ok).to.equal(false);
    expect(res.body.error).to.match(/^HTTP 401: \{"error":\{"message":"Incorrect API key provided: Bearer \[redacted\]\.+ Again: Bearer \[redac/);
    expect(res.text, 'not even the start of the key').not.to.contain(KEY.slice(0, 8));
  });

  it("the LLM proxy answers the provider's error with the model's key redacted", async () => {
    services.model.script('proxy-echo', [refuseEchoing]);
    const { client } = await newKey(services.api, org.client, { name: 'redact proxy' });
    const res = await client.post('/api/llm-proxy/v1/chat/completions', { messages: [{ role: 'user', content: 'proxy-echo' }] });
    expect(res.status).to.equal(401);
    expect(res.text).not.to.contain(KEY);
    expect(res.body.error.message).to.match(/^Incorrect API key provided: Bearer \[redacted\]\.+ Again: Bearer \[redacted\]$/);

    const anthropic = await client.post(
      '/api/llm-proxy/v1/messages',
      { model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: 'proxy-echo' }] },
      { headers: { 'anthropic-version': '2023-06-01' } },
    );
    expect(anthropic.status).to.equal(401);
    expect(anthropic.text).not.to.contain(ANTHROPIC_KEY);
    expect(anthropic.body.error.message).to.match(/^Incorrect API key provided: \[redacted\]\.+ Again: \[redacted\]$/);
  });
});
