// The LLM proxy (DESIGN.md section 7, SPEC 4.7, 8.5): callers outside the service reach the
// organization's model without its key; answers (streamed ones chunk by chunk) come back as
// the provider sent them, and usage is recorded on the caller's remote run.
import { expect } from 'chai';
import { newKey, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, SseAnswer, sseFrames } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { workerEnv } from '../support/worker.ts';

const CHAT = '/api/llm-proxy/v1/chat/completions';
const MESSAGES = '/api/llm-proxy/v1/messages';
const RATE = 5;
const MAX_BYTES = 4096;

function completion(text: string, usage = { prompt_tokens: 11, completion_tokens: 7 }) {
  return { id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: text } }], usage };
}

describe('LLM proxy', function () {
  this.timeout(60_000);
  let api: TestApi;
  let openai: FakeModel;
  let anthropic: FakeModel;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    openai = await new FakeModel().start();
    anthropic = await new FakeModel().start();
    api = await startTestApi(workerEnv({ LLM_PROXY_LIMITS: JSON.stringify({ rate_per_min: RATE, max_request_bytes: MAX_BYTES }) }));
    org = await newOrg(api, 'llm');
    const gpt = await org.client.post('/api/models', {
      name: 'gpt',
      provider: 'openai-compatible',
      baseUrl: openai.url,
      model: 'upstream-gpt',
      apiKey: 'sk-configured',
      isDefault: true,
      inputCostPerMTok: 1_000_000,
      outputCostPerMTok: 2_000_000,
    });
    expect(gpt.status, gpt.text).to.equal(201);
    const claude = await org.client.post('/api/models', {
      name: 'claude',
      provider: 'anthropic',
      baseUrl: anthropic.url,
      model: 'claude-upstream',
      apiKey: 'sk-ant-configured',
    });
    expect(claude.status, claude.text).to.equal(201);
    await importAgent(org.client, { name: '@llm/remote' });
  });
  after(async () => {
    await api?.close();
    await openai?.stop();
    await anthropic?.stop();
  });

  const caller = async (scopes?: string[]) => newKey(api, org.client, { name: 'proxy caller', ...(scopes ? { scopes } : {}) });
  const chat = (marker: string, extra: Record<string, unknown> = {}) => ({ model: 'whatever', messages: [{ role: 'user', content: marker }], ...extra });

  it('forwards a completion to the default model with its key injected and model rewritten', async () => {
    const { key, client } = await caller();
    openai.script('plain-call', [() => completion('hello from upstream')]);
    const res = await client.post(CHAT, chat('plain-call', { temperature: 0.2 }));
    expect(res.status, res.text).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(res.body.choices[0].message.content).to.equal('hello from upstream');
    expect(res.body.usage).to.deep.equal({ prompt_tokens: 11, completion_tokens: 7 });
    const seen = openai.requests.find((r) => JSON.stringify(r.body).includes('plain-call'))!;
    expect(seen.path).to.equal('/chat/completions');
    expect(seen.headers.authorization).to.equal('Bearer sk-configured');
    expect(JSON.stringify(seen.headers)).not.to.include(key);
    expect(seen.body).to.deep.equal({ model: 'upstream-gpt', messages: [{ role: 'user', content: 'plain-call' }], temperature: 0.2 });
  });

  it("answers the provider's own error status and body", async () => {
    const { client } = await caller();
    openai.script('upstream-error', [() => ({ status: 429, body: { error: { message: 'slow down', type: 'rate_limit' } } })]);
    const res = await client.post(CHAT, chat('upstream-error'));
    expect(res.status).to.equal(429);
    expect(res.body).to.deep.equal({ error: { message: 'slow down', type: 'rate_limit' } });
  });

  it("passes a stream through chunk by chunk, and adds its final usage to the caller's remote run", async () => {
    const { client, key } = await caller();
    const launched = await client.post('/api/runs/remote', { packageId: '@llm/remote' });
    expect(launched.status, launched.text).to.equal(201);
    const runId = launched.body.id as string;
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    const frames = sseFrames([
      { id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'first' } }] },
      { id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: ' second' } }] },
      { id: 'c1', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } },
    ]);
    // The fake sends everything after the first frame only once the client has read it.
    openai.script('stream-call', [() => new SseAnswer(frames, async (i) => (i === 1 ? released : undefined))]);
    const res = await fetch(api.url + CHAT, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'X-Run-Id': runId },
      body: JSON.stringify(chat('stream-call', { stream: true })),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const first = await reader.read();
    expect(decoder.decode(first.value)).to.equal(frames[0]);
    release();
    let text = decoder.decode(first.value);
    let reads = 1;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      reads++;
      text += decoder.decode(value, { stream: true });
    }
    expect(text).to.equal(frames.join(''));
    expect(reads).to.be.greaterThan(1);
    const seen = openai.requests.find((r) => JSON.stringify(r.body).includes('stream-call'))!;
    expect(seen.body).to.include({ model: 'upstream-gpt', stream: true });
    // Usage lands once the stream ended: 3 in, 2 out, at 1 and 2 USD a token.
    let usage: any;
    for (let i = 0; i < 50; i++) {
      usage = (await client.get(`/api/runs/${runId}`)).body.usage;
      if (usage.inputTokens) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(usage).to.deep.equal({ inputTokens: 3, outputTokens: 2, costUsd: 7 });
    // Non-streamed calls add to it.
    openai.script('run-usage', [() => completion('ok', { prompt_tokens: 10, completion_tokens: 1 })]);
    const again = await client.post(CHAT, chat('run-usage'), { headers: { 'X-Run-Id': runId } });
    expect(again.status, again.text).to.equal(200);
    expect((await client.get(`/api/runs/${runId}`)).body.usage).to.deep.equal({ inputTokens: 13, outputTokens: 3, costUsd: 19 });
    // Only the run's own launcher may charge it; unknown runs are 404 too.
    const other = await caller();
    expectProblem(await other.client.post(CHAT, chat('run-usage'), { headers: { 'X-Run-Id': runId } }), 404, 'not_found');
    expectProblem(await client.post(CHAT, chat('run-usage'), { headers: { 'X-Run-Id': 'run_nothing' } }), 404, 'not_found');
  });

  it('routes Anthropic messages to the model named by `model`, with x-api-key injected', async () => {
    const { key, client } = await caller();
    anthropic.script('anthropic-call', [
      () => ({
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'hi from claude' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 9, output_tokens: 4 },
      }),
    ]);
    const res = await client.post(
      MESSAGES,
      { model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: 'anthropic-call' }] },
      { headers: { 'anthropic-version': '2023-06-01' } },
    );
    expect(res.status, res.text).to.equal(200);
    expect(res.body.content[0].text).to.equal('hi from claude');
    const seen = anthropic.requests.find((r) => JSON.stringify(r.body).includes('anthropic-call'))!;
    expect(seen.path).to.equal('/v1/messages');
    expect(seen.headers['x-api-key']).to.equal('sk-ant-configured');
    expect(seen.headers['anthropic-version']).to.equal('2023-06-01');
    expect(seen.headers.authorization).to.equal(undefined);
    expect(JSON.stringify(seen.headers)).not.to.include(key);
    expect(seen.body).to.deep.equal({ model: 'claude-upstream', max_tokens: 100, messages: [{ role: 'user', content: 'anthropic-call' }] });
  });

  it('passes an Anthropic stream through and reads its usage from message_start and message_delta', async () => {
    const { client, key } = await caller();
    const launched = await client.post('/api/runs/remote', { packageId: '@llm/remote' });
    expect(launched.status, launched.text).to.equal(201);
    const events = [
      { type: 'message_start', message: { id: 'msg_2', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 5, output_tokens: 1 } } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'streamed' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 6 } },
      { type: 'message_stop' },
    ];
    const frames = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    anthropic.script('anthropic-stream', [() => new SseAnswer(frames)]);
    const res = await fetch(api.url + MESSAGES, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'X-Run-Id': launched.body.id },
      body: JSON.stringify({ model: 'claude', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'anthropic-stream' }] }),
    });
    expect(res.status).to.equal(200);
    expect(await res.text()).to.equal(frames.join(''));
    let usage: any;
    for (let i = 0; i < 50; i++) {
      usage = (await client.get(`/api/runs/${launched.body.id}`)).body.usage;
      if (usage.inputTokens) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // The anthropic model has no configured prices.
    expect(usage).to.deep.equal({ inputTokens: 5, outputTokens: 6, costUsd: 0 });
  });

  it("refuses a route that does not speak the target model's protocol", async () => {
    const { client } = await caller();
    expectProblem(await client.post(MESSAGES, { max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }), 409, 'model_provider_mismatch');
    expectProblem(await client.post(CHAT, chat('x', { model: 'claude' })), 409, 'model_provider_mismatch');
  });

  it('needs llm-proxy:call', async () => {
    const { client } = await caller(['agents:read']);
    expectProblem(await client.post(CHAT, chat('no-scope')), 403, 'forbidden');
    expect(openai.requests.some((r) => JSON.stringify(r.body).includes('no-scope'))).to.equal(false);
  });

  it('refuses a body over max_request_bytes with 413', async () => {
    const { client } = await caller();
    const big = chat('too-big', { padding: 'x'.repeat(MAX_BYTES) });
    expectProblem(await client.post(CHAT, big), 413, 'payload_too_large');
    expect(openai.requests.some((r) => JSON.stringify(r.body).includes('too-big'))).to.equal(false);
  });

  it('limits each identity to rate_per_min calls per route', async () => {
    const { client } = await caller();
    openai.script('rate-call', [() => completion('ok')]);
    for (let i = 0; i < RATE; i++) {
      const res = await client.post(CHAT, chat('rate-call'));
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.get('ratelimit-policy')).to.equal(`${RATE};w=60`);
    }
    expectProblem(await client.post(CHAT, chat('rate-call')), 429, 'rate_limited');
  });

  it('refuses a model whose address the egress policy blocks', async () => {
    const solo = await newOrg(api, 'llm-egress');
    const created = await solo.client.post('/api/models', { name: 'm', provider: 'openai-compatible', baseUrl: openai.url, model: 'm', isDefault: true });
    expect(created.status, created.text).to.equal(201);
    // The instance allowed 127.0.0.1 when the model was configured; an address it never allowed is refused.
    await api.knex('models').where({ org_id: solo.orgId }).update({ base_url: 'http://10.0.0.1:9' });
    expectProblem(await solo.client.post(CHAT, chat('blocked')), 502, 'model_unreachable');
  });
});
