// DESIGN.md section 5 "Models": organization models (OpenAI-compatible and Anthropic), the
// instance default from MODEL_*, and what the model is shown (skills).
import { expect } from 'chai';
import { packageFiles, skillManifest, zip } from '../fixtures/packages/build.ts';
import { newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent, uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

describe('models', function () {
  this.timeout(60_000);
  let api: TestApi;
  let model: FakeModel;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;

  before(async () => {
    model = await new FakeModel().start();
    api = await startTestApi(workerEnv());
    // The instance default: used by organizations that configure no model of their own (shared
    // with every organization here; by default only the instance owner's: instance-model.test.ts).
    worker = await startTestWorker({ MODEL_BASE_URL: model.url, MODEL_NAME: 'instance-model', MODEL_API_KEY: 'sk-instance', INSTANCE_MODEL_ORGS: 'all' });
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await model?.stop();
  });

  it('uses the instance default model when the organization has none', async () => {
    const org = await newOrg(api);
    expect((await org.client.get('/api/models')).body.data).to.deep.equal([]);
    await importAgent(org.client, { name: '@env/agent' });
    model.script('env-default', [() => toolCall('output', { via: 'instance' })]);
    const run = await org.client.post('/api/agents/@env/agent/run', { input: { marker: 'env-default' } });
    const done = await org.client.get(`/api/runs/${run.body.id}?wait=30`);
    expect(done.body.status, done.body.error).to.equal('success');
    const req = model.requests.find((r) => JSON.stringify(r.body).includes('env-default'))!;
    expect(req.path).to.equal('/chat/completions');
    expect(req.body.model).to.equal('instance-model');
    expect(req.headers.authorization).to.equal('Bearer sk-instance');
  });

  it('speaks Anthropic messages to an anthropic model, tools and usage included', async () => {
    const org = await newOrg(api);
    const created = await org.client.post('/api/models', {
      name: 'claude',
      provider: 'anthropic',
      baseUrl: model.url,
      model: 'claude-test',
      apiKey: 'sk-ant-test',
      isDefault: true,
    });
    expect(created.status).to.equal(201);
    await importAgent(org.client, {
      name: '@ant/agent',
      prompt: 'Answer briefly.',
      output: { type: 'object', required: ['answer'], properties: { answer: { type: 'string' } } },
    });
    model.script('anthropic-run', [
      () => ({
        content: [{ type: 'tool_use', id: 'tu_1', name: 'log', input: { level: 'info', message: 'from claude' } }],
        usage: { input_tokens: 7, output_tokens: 3 },
      }),
      () => ({
        content: [
          { type: 'text', text: 'done' },
          { type: 'tool_use', id: 'tu_2', name: 'output', input: { answer: '42' } },
        ],
        usage: { input_tokens: 9, output_tokens: 4 },
      }),
    ]);
    const run = await org.client.post('/api/agents/@ant/agent/run', { input: { q: 'anthropic-run' } });
    const done = await org.client.get(`/api/runs/${run.body.id}?wait=30`);
    expect(done.body.status, done.body.error).to.equal('success');
    expect(done.body.result).to.deep.equal({ output: { answer: '42' } });
    expect(done.body.usage).to.include({ inputTokens: 16, outputTokens: 7 });
    const calls = model.requests.filter((r) => JSON.stringify(r.body).includes('anthropic-run'));
    expect(calls).to.have.length(2);
    expect(calls[0].path).to.equal('/v1/messages');
    expect(calls[0].headers['x-api-key']).to.equal('sk-ant-test');
    expect(calls[0].headers['anthropic-version']).to.equal('2023-06-01');
    expect(calls[0].body.system).to.contain('Answer briefly.');
    expect(calls[0].body.tools.find((t: any) => t.name === 'output').input_schema.required).to.deep.equal(['answer']);
    // The second call carries the tool_use and its tool_result.
    const second = calls[1].body.messages;
    expect(second.map((m: any) => m.role)).to.deep.equal(['user', 'assistant', 'user']);
    expect(second[1].content[0]).to.include({ type: 'tool_use', id: 'tu_1', name: 'log' });
    expect(second[2].content[0]).to.include({ type: 'tool_result', tool_use_id: 'tu_1' });
  });

  it('counts Anthropic prompt-cache reads and writes as input tokens, in a run and through the LLM proxy alike', async () => {
    const org = await newOrg(api);
    const created = await org.client.post('/api/models', {
      name: 'cached-claude',
      provider: 'anthropic',
      baseUrl: model.url,
      model: 'claude-cached',
      apiKey: 'sk-ant-cache',
      isDefault: true,
      inputCostPerMTok: 3,
      outputCostPerMTok: 15,
    });
    expect(created.status, created.text).to.equal(201);
    await importAgent(org.client, { name: '@cache/agent' });
    // One answer, twice: 5 new input tokens, 100 written to the prompt cache, 2000 read from it.
    const answer = () => ({
      id: 'msg_cache',
      type: 'message',
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'tu_cache', name: 'output', input: {} }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 7 },
    });
    model.script('cache-run', [answer]);
    model.script('cache-proxy', [answer]);
    const run = await org.client.post('/api/agents/@cache/agent/run', { input: { q: 'cache-run' } });
    const done = await org.client.get(`/api/runs/${run.body.id}?wait=30`);
    expect(done.body.status, done.body.error).to.equal('success');
    const { client } = await newKey(api, org.client, { name: 'proxy caller' });
    const remote = await client.post('/api/runs/remote', { packageId: '@cache/agent' });
    expect(remote.status, remote.text).to.equal(201);
    const proxied = await client.post(
      '/api/llm-proxy/v1/messages',
      { max_tokens: 100, messages: [{ role: 'user', content: 'cache-proxy' }] },
      { headers: { 'X-Run-Id': remote.body.id } },
    );
    expect(proxied.status, proxied.text).to.equal(200);
    // 2105 input tokens at 3 USD and 7 output tokens at 15 USD per million.
    const expected = { inputTokens: 2105, outputTokens: 7, costUsd: 0.00642 };
    expect(done.body.usage, 'the run through the sidecar').to.deep.equal(expected);
    expect((await client.get(`/api/runs/${remote.body.id}`)).body.usage, 'the remote run through the LLM proxy').to.deep.equal(expected);
  });

  it('shows the model the SKILL.md of each skill the agent depends on', async () => {
    const org = await newOrg(api);
    const skill = await uploadPackage(
      org.client,
      await zip(packageFiles(skillManifest('@acme/house-style'), { 'SKILL.md': '# House style\nAlways answer in haiku.\n' })),
    );
    expect(skill.status, skill.text).to.equal(201);
    await importAgent(org.client, { name: '@acme/poet', dependencies: { skills: { '@acme/house-style': '^1.0.0' } } });
    model.script('skill-run', [() => toolCall('output', { ok: true })]);
    const run = await org.client.post('/api/agents/@acme/poet/run', { input: { m: 'skill-run' } });
    expect((await org.client.get(`/api/runs/${run.body.id}?wait=30`)).body.status).to.equal('success');
    const req = model.requests.find((r) => JSON.stringify(r.body).includes('skill-run'))!;
    expect(req.body.messages[0].content).to.contain('Always answer in haiku.');
  });

  it("fails the run with the provider's answer when the model call is refused", async () => {
    const org = await newOrg(api);
    await org.client.post('/api/models', { name: 'bad', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    await importAgent(org.client, { name: '@bad/agent' });
    model.script('refused-call', [() => ({ status: 401, body: { error: { message: 'invalid api key' } } })]);
    const run = await org.client.post('/api/agents/@bad/agent/run', { input: { m: 'refused-call' } });
    const done = await org.client.get(`/api/runs/${run.body.id}?wait=30`);
    expect(done.body.status).to.equal('failed');
    expect(done.body.error).to.contain('HTTP 401').and.contain('invalid api key');
  });

  it('manages models at organization level: write-only key, one default, scopes, SSRF check', async () => {
    const org = await newOrg(api);
    const a = await org.client.post('/api/models', {
      name: 'a',
      provider: 'openai-compatible',
      baseUrl: model.url,
      model: 'm',
      apiKey: 'sk-a',
      isDefault: true,
    });
    const b = await org.client.post('/api/models', { name: 'b', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    const list = (await org.client.get('/api/models')).body.data;
    expect(list.find((m: any) => m.id === a.body.id).isDefault).to.equal(false);
    expect(list.find((m: any) => m.id === b.body.id).isDefault).to.equal(true);
    expect(JSON.stringify(list)).not.to.contain('sk-a');
    const row = await api.knex('models').where({ id: a.body.id }).first();
    expect(row.api_key_enc).to.match(/^v1\./).and.not.contain('sk-a');
    const patched = await org.client.patch(`/api/models/${a.body.id}`, { apiKey: null, model: 'm2' });
    expect(patched.body).to.include({ hasApiKey: false, model: 'm2' });
    expectProblem(await org.client.post('/api/models', { name: 'a', provider: 'openai-compatible', baseUrl: model.url, model: 'm' }), 409, 'conflict');
    // Private addresses are refused unless the host is allowed (the test API allows 127.0.0.1).
    const blocked = await org.client.post('/api/models', { name: 'meta', provider: 'openai-compatible', baseUrl: 'http://169.254.169.254/v1', model: 'm' });
    expectProblem(blocked, 400, 'validation_failed');
    expect(blocked.body.errors[0].field).to.equal('baseUrl');
    const member = await newMember(api, org);
    expect((await member.client.get('/api/models')).status).to.equal(200);
    expectProblem(await member.client.post('/api/models', { name: 'x', provider: 'anthropic', baseUrl: model.url, model: 'm' }), 403, 'forbidden');
    const other = await newOrg(api, 'other');
    expectProblem(await other.client.delete(`/api/models/${a.body.id}`), 404, 'not_found');
    expect((await org.client.delete(`/api/models/${a.body.id}`)).status).to.equal(204);
  });
});
