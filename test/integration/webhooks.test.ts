// SPEC 2.4, 2.5, 4.9, 6: webhooks on the real stack, delivered over HTTPS to a receiver with a
// self-signed certificate trusted through NODE_EXTRA_CA_CERTS, verified with standardwebhooks.
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { newId } from '../../shared/ids.ts';
import { encryptSecret } from '../../shared/secrets.ts';
import { newKey, newMember, newOrg, type TestApi } from '../support/api.ts';
import type { FakeModel } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { type RunServices, startRunServices } from '../support/run-services.ts';
import type { HttpsReceiver, Received } from '../support/receiver.ts';
import { TEST_SECRETS_KEY } from '../support/worker.ts';

describe('webhooks', function () {
  this.timeout(60_000);
  let services: RunServices;
  let api: TestApi;
  let model: FakeModel;
  let receiver: HttpsReceiver;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    services = await startRunServices({ output: { summary: 'done' } });
    ({ api, model, receiver } = services);
    org = await newOrg(api);
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    await importAgent(org.client, { name: '@hooks/agent' });
    await importAgent(org.client, { name: '@hooks/other' });
  });
  after(async () => {
    await services?.stop();
  });

  // Creating webhooks is limited to 10 a minute per identity (SPEC 8.2): each test creates its
  // space-level webhooks with a key of its own.
  let perTest: Awaited<ReturnType<typeof newKey>>;
  beforeEach(async () => {
    perTest = await newKey(api, org.client, { name: 'per-test' });
  });

  const hookUrl = (tag: string) => receiver.url(`/${tag}`);
  const at = (tag: string) => receiver.requests.filter((r) => r.path === `/${tag}`);

  async function create(body: Record<string, unknown>, client = perTest.client) {
    return client.post('/api/webhooks', { level: 'space', spaceId: org.defaultSpaceId, events: ['run.success'], ...body });
  }

  async function runAgent(agent = '@hooks/agent', client = org.client) {
    const run = await client.post(`/api/agents/${agent}/run`, { input: { big: 'y' } });
    const done = await client.get(`/api/runs/${run.body.id}?wait=30`);
    expect(done.body.status).to.equal('success');
    return done.body;
  }

  async function until(tag: string, n: number): Promise<Received[]> {
    for (let i = 0; i < 150 && at(tag).length < n; i++) await new Promise((r) => setTimeout(r, 100));
    expect(at(tag), `deliveries at /${tag}`).to.have.length(n);
    return at(tag);
  }

  it('creates a webhook and returns its whsec_ secret once', async () => {
    const res = await create({ url: hookUrl('create'), events: ['run.started', 'run.success'] });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({ object: 'webhook', level: 'space', spaceId: org.defaultSpaceId, payloadMode: 'full', enabled: true, packageId: null });
    expect(res.body.id).to.match(/^wh_/);
    expect(res.body.secret).to.match(/^whsec_[A-Za-z0-9]{32}$/);
    const read = await org.client.get(`/api/webhooks/${res.body.id}`);
    expect(read.body).not.to.have.property('secret');
    expect(JSON.stringify((await api.knex('webhooks').where({ id: res.body.id }).first()).secret_enc)).not.to.contain(res.body.secret.slice(6));
  });

  it('delivers signed run events that standardwebhooks verifies, with the SPEC 2.5 envelope', async () => {
    const hook = await create({ url: hookUrl('e2e'), events: ['run.started', 'run.success'] });
    const run = await runAgent();
    const got = await until('e2e', 2);
    const wh = new Webhook(hook.body.secret);
    const byType = Object.fromEntries(got.map((r) => [JSON.parse(r.body).type, r]));
    for (const r of got) {
      expect(r.headers['content-type']).to.equal('application/json');
      expect(r.headers['webhook-attempt']).to.equal('1');
      expect(wh.verify(r.body, r.headers as Record<string, string>)).to.be.an('object');
    }
    const success = JSON.parse(byType['run.success'].body);
    expect(success).to.include({ object: 'event', type: 'run.success', apiVersion: '2026-03-21' });
    expect(success.id).to.match(/^evt_/).and.equal(byType['run.success'].headers['webhook-id']);
    expect(success.timestamp).to.equal(run.finishedAt);
    expect(success.data.object).to.deep.include({
      object: 'run',
      id: run.id,
      packageId: '@hooks/agent',
      status: 'success',
      duration: run.duration,
      result: { output: { summary: 'done' } },
    });
    expect(JSON.parse(byType['run.started'].body).data.object).to.include({ status: 'started', id: run.id });
    // A tampered body fails verification.
    expect(() => wh.verify(byType['run.success'].body.replace('done', 'DONE'), byType['run.success'].headers as Record<string, string>)).to.throw();
  });

  it('honours payload modes, the packageId filter and the org level', async () => {
    await create({ url: hookUrl('summary'), payloadMode: 'summary' });
    await create({ url: hookUrl('filtered'), packageId: '@hooks/other' });
    const orgLevel = await org.client.post('/api/webhooks', { level: 'org', url: hookUrl('org'), events: ['run.success'] });
    expect(orgLevel.status, orgLevel.text).to.equal(201);
    const team = await org.client.post('/api/spaces', { name: 'Hooks team' });
    await runAgent();
    const summary = JSON.parse((await until('summary', 1))[0].body).data.object;
    expect(summary).not.to.have.property('result');
    expect(summary).not.to.have.property('input');
    expect(summary.status).to.equal('success');
    await runAgent('@hooks/other');
    const filtered = await until('filtered', 1);
    expect(JSON.parse(filtered[0].body).data.object.packageId).to.equal('@hooks/other');
    // Org level: both runs of the default space; a run in another space as well.
    await importAgent(org.client.with({ 'X-Space-Id': team.body.id }), { name: '@hooks/team-agent' });
    await runAgent('@hooks/team-agent', org.client.with({ 'X-Space-Id': team.body.id }));
    const orgGot = await until('org', 3);
    expect(orgGot.map((r) => JSON.parse(r.body).data.object.packageId)).to.include('@hooks/team-agent');
    expect(at('summary')).to.have.length(2); // space level: not the team space's run
  });

  it('signs with both secrets during a rotation window, then only the new one', async () => {
    const hook = await create({ url: hookUrl('rotate') });
    const rotated = await org.client.post(`/api/webhooks/${hook.body.id}/rotate`, { windowSeconds: 3600 });
    expect(rotated.status).to.equal(200);
    expect(rotated.body.secretPrevious).to.equal(hook.body.secret);
    expect(rotated.body.secret)
      .to.match(/^whsec_/)
      .and.not.equal(hook.body.secret);
    expect(new Date(rotated.body.rotationWindowEndsAt).getTime() - Date.now()).to.be.within(3590_000, 3600_000);
    await runAgent();
    const [during] = await until('rotate', 1);
    expect(String(during.headers['webhook-signature']).split(' ')).to.have.length(2);
    expect(new Webhook(rotated.body.secret).verify(during.body, during.headers as Record<string, string>)).to.be.an('object');
    expect(new Webhook(hook.body.secret).verify(during.body, during.headers as Record<string, string>)).to.be.an('object');
    await api
      .knex('webhooks')
      .where({ id: hook.body.id })
      .update({ rotation_window_ends_at: new Date(Date.now() - 1000) });
    await runAgent();
    const after = (await until('rotate', 2))[1];
    expect(String(after.headers['webhook-signature']).split(' ')).to.have.length(1);
    expect(new Webhook(rotated.body.secret).verify(after.body, after.headers as Record<string, string>)).to.be.an('object');
    expect(() => new Webhook(hook.body.secret).verify(after.body, after.headers as Record<string, string>)).to.throw();
  });

  it('sends test.ping even when disabled, once, and lists deliveries newest first with a cursor', async () => {
    const hook = await create({ url: hookUrl('ping'), enabled: false });
    const ping = await org.client.post(`/api/webhooks/${hook.body.id}/test`);
    expect(ping.status).to.equal(200);
    expect(ping.body.eventId).to.match(/^evt_/);
    expect(ping.body.payload).to.include({ type: 'test.ping', id: ping.body.eventId });
    const [got] = await until('ping', 1);
    expect(JSON.parse(got.body)).to.deep.equal(ping.body.payload);
    await runAgent(); // disabled: no run delivery
    for (let i = 0; i < 2; i++) await org.client.post(`/api/webhooks/${hook.body.id}/test`);
    await until('ping', 3);
    const page1 = await org.client.get(`/api/webhooks/${hook.body.id}/deliveries?limit=2`);
    expect(page1.body.data).to.have.length(2);
    expect(page1.body.hasMore).to.equal(true);
    expect(page1.body.data[0]).to.include({ object: 'webhook_delivery', status: 'success', statusCode: 200, attempt: 1, eventType: 'test.ping' });
    expect(page1.headers.get('link')).to.contain(`startingAfter=${page1.body.data[1].id}`);
    const page2 = await org.client.get(`/api/webhooks/${hook.body.id}/deliveries?limit=2&startingAfter=${page1.body.data[1].id}`);
    expect(page2.body.data).to.have.length(1);
    expect(page2.body.data[0].eventId).to.equal(ping.body.eventId);
    expect(page2.body.hasMore).to.equal(false);
  });

  it('refuses URLs that are not HTTPS or point at private, loopback, link-local or reserved addresses', async () => {
    for (const url of [
      'http://example.com/hook',
      'https://localhost/hook',
      'https://app.localhost/hook',
      'https://10.1.2.3/hook',
      'https://169.254.169.254/latest',
      'https://[::1]/hook',
      'https://100.64.0.1/x',
    ]) {
      const res = await create({ url });
      expectProblem(res, 400, 'blocked_url');
    }
  });

  it('merges PATCH, refuses changing level or secret, and deletes the delivery history with the webhook', async () => {
    const hook = await create({ url: hookUrl('patch'), events: ['run.success', 'run.failed'] });
    const patched = await org.client.patch(`/api/webhooks/${hook.body.id}`, { enabled: false });
    expect(patched.body).to.include({ enabled: false, url: hookUrl('patch') });
    expect(patched.body.events).to.deep.equal(['run.success', 'run.failed']);
    expectProblem(await org.client.patch(`/api/webhooks/${hook.body.id}`, { level: 'org' }), 400, 'validation_failed');
    expectProblem(await org.client.patch(`/api/webhooks/${hook.body.id}`, { secret: 'whsec_x' }), 400, 'validation_failed');
    await org.client.post(`/api/webhooks/${hook.body.id}/test`);
    await until('patch', 1);
    for (let i = 0; i < 50 && (await api.knex('webhook_deliveries').where({ webhook_id: hook.body.id })).length === 0; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect((await org.client.delete(`/api/webhooks/${hook.body.id}`)).status).to.equal(204);
    expect(await api.knex('webhook_deliveries').where({ webhook_id: hook.body.id })).to.have.length(0);
    expectProblem(await org.client.get(`/api/webhooks/${hook.body.id}`), 404, 'not_found');
  });

  it('enforces the permissions of SPEC 4.9', async () => {
    const member = await newMember(api, org);
    expectProblem(await create({ url: hookUrl('perm') }, member.client), 403, 'forbidden');
    const builder = await newMember(api, org, 'builder');
    expect((await create({ url: hookUrl('perm') }, builder.client)).status).to.equal(201);
    expectProblem(await builder.client.post('/api/webhooks', { level: 'org', url: hookUrl('perm'), events: ['run.success'] }), 403, 'forbidden');
    // API keys: their own space only, never the organization level.
    const key = await newKey(api, org.client, { name: 'hooks' });
    expect((await create({ url: hookUrl('perm') }, key.client)).status).to.equal(201);
    const team = await org.client.post('/api/spaces', { name: 'Other hooks' });
    expectProblem(await create({ url: hookUrl('perm'), spaceId: team.body.id }, key.client), 403, 'forbidden');
    expectProblem(await key.client.post('/api/webhooks', { level: 'org', url: hookUrl('perm'), events: ['run.success'] }), 403, 'forbidden');
    const keyList = await key.client.get('/api/webhooks?all=true');
    expect(keyList.body.data.every((h: any) => h.level === 'space' && h.spaceId === org.defaultSpaceId)).to.equal(true);
    // Organization-level webhooks are invisible to members: 404, and absent from lists.
    const orgHook = await org.client.post('/api/webhooks', { level: 'org', url: hookUrl('perm'), events: ['run.failed'] });
    expectProblem(await member.client.get(`/api/webhooks/${orgHook.body.id}`), 404, 'not_found');
    expect((await member.client.get('/api/webhooks')).body.data).to.deep.equal([]);
    expectProblem(await member.client.get('/api/webhooks?all=true'), 403, 'forbidden');
    const all = await org.client.get('/api/webhooks?all=true');
    expect(all.body.data.map((h: any) => h.id)).to.include(orgHook.body.id);
    const other = await newOrg(api, 'other');
    expectProblem(await other.client.get(`/api/webhooks/${orgHook.body.id}`), 404, 'not_found');
  });

  it('allows 20 webhooks per space and 20 per organization', async () => {
    const fresh = await newOrg(api, 'limits');
    const rows = (level: 'space' | 'org', n: number) =>
      Array.from({ length: n }, () => ({
        id: newId('wh'),
        org_id: fresh.orgId,
        level,
        space_id: level === 'space' ? fresh.defaultSpaceId : null,
        url: hookUrl('limit'),
        events: ['run.success'],
        secret_enc: encryptSecret(Buffer.from(TEST_SECRETS_KEY, 'base64'), 'whsec_x'),
      }));
    await api.knex('webhooks').insert([...rows('space', 19), ...rows('org', 20)]);
    const twentieth = await fresh.client.post('/api/webhooks', {
      level: 'space',
      spaceId: fresh.defaultSpaceId,
      url: hookUrl('limit'),
      events: ['run.success'],
    });
    expect(twentieth.status).to.equal(201);
    const more = await fresh.client.post('/api/webhooks', { level: 'space', spaceId: fresh.defaultSpaceId, url: hookUrl('limit'), events: ['run.success'] });
    expectProblem(more, 409, 'webhook_limit_reached');
    expectProblem(await fresh.client.post('/api/webhooks', { level: 'org', url: hookUrl('limit'), events: ['run.success'] }), 409, 'webhook_limit_reached');
  });
});
