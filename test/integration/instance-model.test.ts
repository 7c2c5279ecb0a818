// DESIGN.md 5 "Models", issue 28: the instance model (MODEL_*) is the operator's key. By default
// it serves only the organizations the instance owner (the bootstrap user) created and owns, so
// a stranger who signs up (open sign-up) cannot spend it; INSTANCE_MODEL_ORGS=all shares it.
// Runs, the LLM proxy and chat resolve it through one function, so all three follow the rule.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { sha256Hex } from '../../shared/crypto.ts';
import { Client, newOrg, PASSWORD, startTestApi, type TestApi, uniqueEmail } from '../support/api.ts';
import { FakeModel, textAnswer, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

const INSTANCE_MODEL = { MODEL_NAME: 'instance-model', MODEL_API_KEY: 'sk-operator' };
const NO_MODEL = /^No model is configured/;

type Org = Awaited<ReturnType<typeof newOrg>>;

describe('instance model (INSTANCE_MODEL_ORGS)', function () {
  this.timeout(120_000);
  let model: FakeModel;
  let api: TestApi;
  let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined;
  let owner: { client: Client; orgId: string; email: string };
  let stranger: Org;

  const env = (extra: Record<string, string> = {}) => ({ MODEL_BASE_URL: model.url, ...INSTANCE_MODEL, ...extra });
  const heard = (marker: string) => model.requests.filter((r) => JSON.stringify(r.body).includes(marker));

  /** The first instance owner, through the bootstrap token as an operator redeems it. */
  async function bootstrapOwner(): Promise<typeof owner> {
    const token = `boot_${randomBytes(12).toString('hex')}`;
    await api
      .knex('instance_settings')
      .insert({ key: 'bootstrap', value: JSON.stringify({ token_hash: sha256Hex(token), redeemed_at: null }), updated_at: new Date() })
      .onConflict('key')
      .merge();
    const client = new Client(api.url);
    const email = uniqueEmail('operator');
    const res = await client.post('/api/auth/bootstrap/redeem', { token, email, password: PASSWORD, name: 'Operator' });
    expect(res.status, res.text).to.equal(201);
    const { id, defaultSpaceId } = res.body.organization;
    return { client: client.with({ 'X-Org-Id': id, 'X-Space-Id': defaultSpaceId }), orgId: id, email };
  }

  async function run(client: Client, agent: string, marker: string) {
    const launched = await client.post(`/api/agents/${agent}/run`, { input: { marker } });
    expect(launched.status, launched.text).to.equal(201);
    const done = await client.get(`/api/runs/${launched.body.id}?wait=50`);
    expect(done.status, done.text).to.equal(200);
    return done.body;
  }

  before(async () => {
    model = await new FakeModel().start();
    model.setFallback(() => toolCall('output', { via: 'instance' }));
    api = await startTestApi(workerEnv(env()));
    worker = await startTestWorker(env());
    owner = await bootstrapOwner();
    stranger = await newOrg(api, 'stranger');
    for (const org of [owner, stranger]) {
      expect((await org.client.get('/api/models')).body.data, 'no organization model').to.deep.equal([]);
      await importAgent(org.client, { name: '@instance/agent' });
    }
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await model?.stop();
  });

  it("serves the instance owner's organization", async () => {
    const marker = `owner-${randomBytes(4).toString('hex')}`;
    const done = await run(owner.client, '@instance/agent', marker);
    expect(done.status, done.error).to.equal('success');
    const [req] = heard(marker);
    expect(req.body.model).to.equal('instance-model');
    expect(req.headers.authorization).to.equal('Bearer sk-operator');
  });

  it("refuses it to a stranger's organization: the run fails with the no-model error and the model hears nothing", async () => {
    const marker = `stranger-${randomBytes(4).toString('hex')}`;
    const done = await run(stranger.client, '@instance/agent', marker);
    expect(done.status).to.equal('failed');
    expect(done.error).to.match(NO_MODEL);
    expect(done.error).to.include('INSTANCE_MODEL_ORGS');
    expect(heard(marker)).to.have.length(0);
  });

  it('does not count an organization a stranger made the instance owner an owner of', async () => {
    // Anyone may add an existing account as owner of their organization, without its consent.
    const added = await stranger.client.post(`/api/orgs/${stranger.orgId}/members`, { email: owner.email, role: 'owner' });
    expect(added.status, added.text).to.equal(201);
    const marker = `co-owned-${randomBytes(4).toString('hex')}`;
    const done = await run(stranger.client, '@instance/agent', marker);
    expect(done.status).to.equal('failed');
    expect(done.error).to.match(NO_MODEL);
    expect(heard(marker)).to.have.length(0);
  });

  it('follows the same rule in the LLM proxy', async () => {
    const marker = `proxy-${randomBytes(4).toString('hex')}`;
    const body = { model: 'anything', messages: [{ role: 'user', content: marker }] };
    const refused = await stranger.client.post('/api/llm-proxy/v1/chat/completions', body);
    expectProblem(refused, 409, 'no_model_configured');
    expect(refused.body.detail).to.match(NO_MODEL);
    expect(heard(marker)).to.have.length(0);

    model.script(marker, [() => textAnswer('from the instance model')]);
    const served = await owner.client.post('/api/llm-proxy/v1/chat/completions', body);
    expect(served.status, served.text).to.equal(200);
    expect(served.body.choices[0].message.content).to.equal('from the instance model');
    expect(heard(marker)[0].body.model).to.equal('instance-model');
  });

  it('follows the same rule in chat', async () => {
    const marker = `chat-${randomBytes(4).toString('hex')}`;
    const session = await stranger.client.post('/api/chat/sessions', { packageId: '@instance/agent' });
    expect(session.status, session.text).to.equal(201);
    const sent = await stranger.client.post(`/api/chat/sessions/${session.body.id}/messages`, { content: marker });
    expect(sent.status, sent.text).to.equal(200);
    expect(sent.body.reply.status).to.equal('failed');
    expect(sent.body.reply.error).to.match(NO_MODEL);
    expect(heard(marker)).to.have.length(0);
  });

  it('INSTANCE_MODEL_ORGS=all shares it with every organization', async () => {
    await worker?.stop();
    worker = undefined;
    worker = await startTestWorker(env({ INSTANCE_MODEL_ORGS: 'all' }));
    const shared = await startTestApi(workerEnv(env({ INSTANCE_MODEL_ORGS: 'all' })));
    try {
      const marker = `shared-${randomBytes(4).toString('hex')}`;
      const done = await run(stranger.client, '@instance/agent', marker);
      expect(done.status, done.error).to.equal('success');
      expect(heard(marker)[0].body.model).to.equal('instance-model');

      const proxied = `shared-proxy-${randomBytes(4).toString('hex')}`;
      model.script(proxied, [() => textAnswer('shared')]);
      const viaShared = new Client(shared.url, stranger.client.defaults);
      viaShared.cookie = stranger.client.cookie;
      const res = await viaShared.post('/api/llm-proxy/v1/chat/completions', { messages: [{ role: 'user', content: proxied }] });
      expect(res.status, res.text).to.equal(200);
    } finally {
      await shared.close();
    }
  });

  it('refuses an unknown INSTANCE_MODEL_ORGS value at boot, naming it', async () => {
    const { loadConfig } = await import('../../shared/config.ts');
    expect(() => loadConfig({ INSTANCE_MODEL_ORGS: 'everyone' })).to.throw(/INSTANCE_MODEL_ORGS/);
  });
});
