// Inline runs (SPEC 4.4, 8.2, 8.4, 8.8) on the real stack: each INLINE_RUN_LIMITS entry refused
// by both routes, the rates per identity and per organization, validation without a run, a
// full run through the fake model, the temporary package kept out of every name lookup, the
// ephemeral marker on events, idempotent replays and the agents:write requirement.
import { expect } from 'chai';
import { packageFiles, skillManifest, uniqueScope, zip } from '../fixtures/packages/build.ts';
import { type Client, newKey, newMember, newOrg, type Res, startTestApi, type TestApi } from '../support/api.ts';
import { type FakeModel, toolCall } from '../support/fake-model.ts';
import { agentManifest, importAgent, uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { type RunServices, startRunServices } from '../support/run-services.ts';
import type { HttpsReceiver } from '../support/receiver.ts';
import { workerEnv } from '../support/worker.ts';

const LIMITS = { rate_per_min: 1000, manifest_bytes: 3000, prompt_bytes: 100, max_skills: 1, max_tools: 3, max_authorized_uris: 2 };
const TOPIC_SCHEMA = { type: 'object', required: ['topic'], properties: { topic: { type: 'string' }, depth: { type: 'integer', default: 2 } } };
const OUTPUT_SCHEMA = { type: 'object', required: ['summary'], properties: { summary: { type: 'string' } } };

describe('inline runs', function () {
  this.timeout(60_000);
  let services: RunServices;
  let api: TestApi;
  let model: FakeModel;
  let receiver: HttpsReceiver;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    services = await startRunServices({ output: { summary: 'fallback' }, apiEnv: { INLINE_RUN_LIMITS: JSON.stringify(LIMITS) } });
    ({ api, model, receiver } = services);
    org = await newOrg(api, 'inline');
    const created = await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    expect(created.status, created.text).to.equal(201);
  });
  after(async () => {
    await services?.stop();
  });

  /** A valid inline request: an agent named under a fresh scope. */
  function request(extra: Record<string, unknown> = {}, over: { prompt?: string; input?: Record<string, unknown> } = {}) {
    const manifest: Record<string, any> = { ...agentManifest({ name: `${uniqueScope('inl')}/agent`, input: TOPIC_SCHEMA, output: OUTPUT_SCHEMA }), ...extra };
    return { manifest, prompt: over.prompt ?? 'Summarize the topic.', input: over.input ?? { topic: 'x' } };
  }

  const inline = (body: unknown, client: Client = org.client, headers: Record<string, string> = {}) => client.post('/api/runs/inline', body, { headers });
  const validate = (body: unknown, client: Client = org.client) => client.post('/api/runs/inline/validate', body);

  async function ephemeralCount(): Promise<number> {
    const [{ n }] = await api.knex('packages').where({ org_id: org.orgId, ephemeral: true }).count({ n: '*' });
    return Number(n);
  }

  /** Both routes refuse `body` with `problem`, and nothing is created. */
  async function expectRefused(body: unknown, check: (res: Res) => void) {
    const before = await ephemeralCount();
    for (const res of [await inline(body), await validate(body)]) check(res);
    expect(await ephemeralCount()).to.equal(before);
  }

  function expectLimit(limit: string, field: string) {
    return (res: Res) => {
      expectProblem(res, 400, 'inline_limit_exceeded');
      expect(res.body.detail).to.contain(`INLINE_RUN_LIMITS.${limit}`);
      const error = res.body.errors.find((e: any) => e.limit === limit);
      expect(error).to.include({ field, code: 'limit_exceeded', limit });
      expect(error.message).to.contain(`INLINE_RUN_LIMITS.${limit}`);
    };
  }

  const integration = (config: Record<string, unknown>) => ({ integrations_configuration: { '@ext/api': config } });

  describe('limits (each refused by both routes, naming the limit)', () => {
    it('manifest_bytes: the manifest as UTF-8 JSON', async () => {
      await expectRefused(request({ long_description: 'é'.repeat(1600) }), expectLimit('manifest_bytes', 'manifest'));
    });

    it('prompt_bytes: the prompt in UTF-8', async () => {
      expect((await validate(request({}, { prompt: 'a'.repeat(100) }))).status).to.equal(200);
      await expectRefused(request({}, { prompt: 'é'.repeat(51) }), expectLimit('prompt_bytes', 'prompt'));
    });

    it('max_skills: entries of dependencies.skills (checked before they resolve)', async () => {
      const body = request({ dependencies: { skills: { '@nope/one': '^1.0.0', '@nope/two': '^1.0.0' } } });
      await expectRefused(body, expectLimit('max_skills', 'manifest.dependencies.skills'));
    });

    it('max_tools: runtime_tools plus every integrations_configuration tool', async () => {
      expect((await validate(request({ runtime_tools: ['output', 'log'], ...integration({ tools: ['get'] }) }))).status).to.equal(200);
      const body = request({ runtime_tools: ['output', 'log'], ...integration({ tools: ['get', 'put'] }) });
      await expectRefused(body, expectLimit('max_tools', 'manifest'));
    });

    it('max_authorized_uris: entries of each authorized_uris list', async () => {
      const uris = ['https://a.example.com/x', 'https://b.example.com/x', 'https://c.example.com/x'];
      expect((await validate(request(integration({ authorized_uris: uris.slice(0, 2) })))).status).to.equal(200);
      await expectRefused(
        request(integration({ authorized_uris: uris })),
        expectLimit('max_authorized_uris', 'manifest.integrations_configuration.@ext/api.authorized_uris'),
      );
    });

    it('wildcard_uri_allowed: an entry with * is refused while it is false', async () => {
      const body = request(integration({ authorized_uris: ['https://api.example.com/**'] }));
      await expectRefused(body, expectLimit('wildcard_uri_allowed', 'manifest.integrations_configuration.@ext/api.authorized_uris.0'));
    });

    it('lists every limit exceeded at once', async () => {
      const res = await validate(request(integration({ authorized_uris: ['https://*.example.com/'] }), { prompt: 'p'.repeat(101) }));
      expectProblem(res, 400, 'inline_limit_exceeded');
      expect(res.body.errors.map((e: any) => e.limit)).to.have.members(['prompt_bytes', 'wildcard_uri_allowed']);
    });
  });

  it('then validates the manifest and the input (400), and resolves skills (409), on both routes', async () => {
    await expectRefused(request({ version: 'one' }), (res) => {
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors[0]).to.include({ field: 'manifest.version', code: 'invalid_format' });
    });
    await expectRefused(request({ type: 'skill' }), (res) => expectProblem(res, 400, 'validation_failed'));
    await expectRefused(request({}, { input: { depth: 'deep' } }), (res) => {
      expectProblem(res, 400, 'validation_failed');
      expect(Object.fromEntries(res.body.errors.map((e: any) => [e.field, e.code]))).to.deep.include({ topic: 'required', depth: 'invalid_type' });
    });
    await expectRefused(request({ dependencies: { skills: { '@nope/skill': '^1.0.0' } } }), (res) => {
      expectProblem(res, 409, 'dependency_unresolved');
      expect(res.body.errors[0].packageId).to.equal('@nope/skill');
    });
  });

  it('validates a good request with 200 and creates neither run nor package', async () => {
    const skill = `${uniqueScope('skl')}/helper`;
    const published = await uploadPackage(org.client, await zip(packageFiles(skillManifest(skill, '1.2.0'))));
    expect(published.status, published.text).to.equal(201);
    const runsBefore = await api.knex('runs').where({ org_id: org.orgId }).count({ n: '*' });
    const packagesBefore = await ephemeralCount();
    const body = request({ timeout: 90, dependencies: { skills: { [skill]: '^1.0.0' } }, runtime_tools: ['output'], ...integration({ tools: ['get'] }) });
    const res = await validate(body);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({
      object: 'inline_run_validation',
      valid: true,
      packageId: body.manifest.name,
      version: '1.0.0',
      effectiveTimeoutSeconds: 90,
      skills: [{ id: skill, version: '1.2.0' }],
      tools: ['output', '@ext/api:get'],
    });
    expect(await api.knex('runs').where({ org_id: org.orgId }).count({ n: '*' })).to.deep.equal(runsBefore);
    expect(await ephemeralCount()).to.equal(packagesBefore);
  });

  it('runs an inline agent to success through the model; its events carry package: {ephemeral: true}', async () => {
    const hook = await org.client.post('/api/webhooks', { level: 'space', spaceId: org.defaultSpaceId, url: receiver.url('/inline'), events: ['run.success'] });
    expect(hook.status, hook.text).to.equal(201);
    model.script('inline-success', [
      () => toolCall('log', { level: 'info', message: 'inline thinking' }),
      () => toolCall('output', { summary: 'inline done' }),
    ]);
    const body = request({}, { prompt: 'Summarize inline.', input: { topic: 'inline-success' } });
    const res = await inline(body);
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({ object: 'run', status: 'pending', packageId: body.manifest.name, version: '1.0.0' });
    expect(res.body.input).to.deep.equal({ topic: 'inline-success', depth: 2 });
    const done = await org.client.get(`/api/runs/${res.body.id}?wait=30`);
    expect(done.body.status, done.body.error).to.equal('success');
    expect(done.body.result).to.deep.equal({ output: { summary: 'inline done' } });
    const seen = model.requests.find((r) => JSON.stringify(r.body.messages).includes('inline-success'))!;
    expect(seen.body.messages[0].content).to.contain('Summarize inline.');
    const logs = await org.client.get(`/api/runs/${res.body.id}/logs`);
    expect(logs.body.data.map((l: any) => l.message)).to.include('inline thinking');
    const ofRun = () => receiver.requests.find((r) => r.path === '/inline' && JSON.parse(r.body).data.object.id === res.body.id);
    for (let i = 0; i < 150 && !ofRun(); i++) await new Promise((r) => setTimeout(r, 100));
    expect(ofRun(), 'run.success delivered').to.exist;
    const event = JSON.parse(ofRun()!.body).data.object;
    expect(event).to.include({ packageId: body.manifest.name, status: 'success' });
    expect(event.package).to.deep.equal({ ephemeral: true });
    const pkg = await api
      .knex('packages as p')
      .join('runs as r', 'r.package_id', 'p.id')
      .where('r.id', res.body.id)
      .first('p.ephemeral', 'p.home_space_id', 'p.created_by');
    expect(pkg).to.deep.equal({ ephemeral: true, home_space_id: org.defaultSpaceId, created_by: org.userId });
  });

  it('keeps the inline package out of the agents list and name lookups; the name stays free for a real package', async () => {
    const body = request();
    const name: string = body.manifest.name;
    expect((await inline(body)).status).to.equal(201);
    const list = await org.client.get('/api/agents?limit=100');
    expect(list.body.data.map((a: any) => a.id)).not.to.include(name);
    expectProblem(await org.client.get(`/api/agents/${name}`), 404, 'not_found');
    expectProblem(await org.client.post(`/api/agents/${name}/run`, { input: { topic: 'x' } }), 404, 'not_found');
    await importAgent(org.client, { name });
    expect((await org.client.get(`/api/agents/${name}`)).status).to.equal(200);
    // A second inline run may carry the name a published package holds.
    expect((await inline({ ...body, manifest: { ...body.manifest } })).status).to.equal(201);
    expect(
      await api
        .knex('packages')
        .where({ org_id: org.orgId, name: 'agent', scope: name.split('/')[0] })
        .pluck('ephemeral'),
    ).to.have.members([true, true, false]);
  });

  it('replays an Idempotency-Key with the same run and one package', async () => {
    const body = request();
    const key = { 'Idempotency-Key': `inline-${Math.random()}` };
    const first = await inline(body, org.client, key);
    expect(first.status, first.text).to.equal(201);
    const again = await inline(body, org.client, key);
    expect(again.status).to.equal(201);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body.id).to.equal(first.body.id);
    const [{ n }] = await api
      .knex('packages')
      .where({ org_id: org.orgId, scope: body.manifest.name.split('/')[0] })
      .count({ n: '*' });
    expect(Number(n)).to.equal(1);
    expectProblem(await org.client.post('/api/runs/inline/validate', body, { headers: key }), 400, 'idempotency_not_supported');
  });

  it('needs agents:write besides agents:run: a space member gets 403', async () => {
    const member = await newMember(api, org, 'member');
    expectProblem(await inline(request(), member.client), 403, 'forbidden');
    const res = await validate(request(), member.client);
    expectProblem(res, 403, 'forbidden');
    expect(res.body.detail).to.contain('agents:write');
  });

  describe('with rate_per_min 3 and wildcards allowed', () => {
    let strict: TestApi;
    before(async () => {
      strict = await startTestApi(workerEnv({ INLINE_RUN_LIMITS: JSON.stringify({ rate_per_min: 3, wildcard_uri_allowed: true }) }));
    });
    after(() => strict?.close());

    it('accepts the wildcard entry the default refuses', async () => {
      const owner = await newOrg(strict, 'wild');
      const res = await validate(request(integration({ authorized_uris: ['https://api.example.com/**'] })), owner.client);
      expect(res.status, res.text).to.equal(200);
    });

    it('limits each identity to rate_per_min a minute, with RateLimit headers', async () => {
      const owner = await newOrg(strict, 'rate');
      const key = await newKey(strict, owner.client);
      for (let i = 0; i < 3; i++) {
        const ok = await validate(request(), key.client);
        expect(ok.status, ok.text).to.equal(200);
        expect(ok.headers.get('ratelimit')).to.match(new RegExp(`^limit=3, remaining=${2 - i}, reset=\\d+$`));
        expect(ok.headers.get('ratelimit-policy')).to.equal('3;w=60');
      }
      const refused = await validate(request(), key.client);
      expectProblem(refused, 429, 'rate_limited');
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
      expect(refused.headers.get('ratelimit')).to.match(/^limit=3, remaining=0, reset=\d+$/);
      // The other inline route counts on its own.
      expect((await inline(request(), key.client)).headers.get('ratelimit')).to.match(/^limit=3, remaining=2,/);
    });

    it('limits the organization to rate_per_min a minute across its identities', async () => {
      const owner = await newOrg(strict, 'orgrate');
      const a = await newKey(strict, owner.client, { name: 'a' });
      const b = await newKey(strict, owner.client, { name: 'b' });
      for (const client of [a.client, a.client, b.client]) expect((await validate(request(), client)).status).to.equal(200);
      const refused = await validate(request(), b.client);
      expectProblem(refused, 429, 'rate_limited');
      expect(refused.body.detail).to.contain('INLINE_RUN_LIMITS.rate_per_min per organization');
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
      expect(refused.headers.get('ratelimit')).to.match(/^limit=3, remaining=1,/); // b's own counter is not spent
      // Another organization is not affected.
      const other = await newOrg(strict, 'orgrate2');
      expect((await validate(request(), other.client)).status).to.equal(200);
    });
  });
});
