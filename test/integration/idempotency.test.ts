// SPEC 8.8 and 3.2: Idempotency-Key on the operations that declare it, refused on the others.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { workerEnv } from '../support/worker.ts';

describe('idempotency', function () {
  this.timeout(30_000);
  let api: TestApi;
  let org: Awaited<ReturnType<typeof newOrg>>;
  const runs = () => api.knex('runs').where({ org_id: org.orgId });
  // No worker runs here: launched runs stay pending, which is all these tests need.
  before(async () => {
    api = await startTestApi(workerEnv());
    org = await newOrg(api);
    await importAgent(org.client, { name: '@idem/agent', input: { type: 'object', required: ['topic'], properties: { topic: { type: 'string' } } } });
  });
  after(async () => {
    await api.knex('runs').where({ org_id: org.orgId }).delete();
    await api.close();
  });

  it('replays the stored answer with Idempotent-Replayed and runs the handler once', async () => {
    const headers = { 'Idempotency-Key': 'launch-1' };
    const first = await org.client.post('/api/agents/@idem/agent/run', { input: { topic: 'a' } }, { headers });
    expect(first.status).to.equal(201);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    const again = await org.client.post('/api/agents/@idem/agent/run', { input: { topic: 'a' } }, { headers });
    expect(again.status).to.equal(201);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    expect(await runs().where({ id: first.body.id })).to.have.length(1);
    expect((await runs()).filter((r) => r.input.topic === 'a')).to.have.length(1);
  });

  it('makes two concurrent identical requests produce one run', async () => {
    const headers = { 'Idempotency-Key': 'launch-concurrent' };
    const [a, b] = await Promise.all([0, 1].map(() => org.client.post('/api/agents/@idem/agent/run', { input: { topic: 'c' } }, { headers })));
    const statuses = [a.status, b.status].sort();
    expect(statuses[0]).to.equal(201);
    expect([201, 409]).to.include(statuses[1]);
    expect((await runs()).filter((r) => r.input.topic === 'c')).to.have.length(1);
  });

  it('answers 422 for the same key with another body, and keeps keys apart per space', async () => {
    const headers = { 'Idempotency-Key': 'launch-2' };
    await org.client.post('/api/agents/@idem/agent/run', { input: { topic: 'b' } }, { headers });
    const other = await org.client.post('/api/agents/@idem/agent/run', { input: { topic: 'different' } }, { headers });
    expectProblem(other, 422, 'idempotency_conflict');
    const team = await org.client.post('/api/spaces', { name: 'Idem team' });
    const teamClient = org.client.with({ 'X-Space-Id': team.body.id });
    await importAgent(teamClient, { name: '@idem/team-agent' });
    const elsewhere = await teamClient.post('/api/agents/@idem/team-agent/run', { input: {} }, { headers });
    expect(elsewhere.status).to.equal(201);
    expect(elsewhere.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('stores and replays a 4xx answer', async () => {
    const headers = { 'Idempotency-Key': 'launch-invalid' };
    const bad = await org.client.post('/api/agents/@idem/agent/run', { input: {} }, { headers });
    expectProblem(bad, 400, 'validation_failed');
    const replay = await org.client.post('/api/agents/@idem/agent/run', { input: {} }, { headers });
    expect(replay.status).to.equal(400);
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    expect(replay.body.errors).to.deep.equal(bad.body.errors);
  });

  it('answers 409 while the first request is still in progress', async () => {
    const body = { input: { topic: 'z' } };
    // The fingerprint the service computes: SHA-256 over method, path, query string and raw body.
    const fingerprint = createHash('sha256').update('POST\n/api/agents/@idem/agent/run\n\n').update(JSON.stringify(body)).digest('hex');
    await api
      .knex('idempotency_keys')
      .insert({ org_id: org.orgId, space_key: org.defaultSpaceId, key: 'stuck', fingerprint, state: 'in_progress', expires_at: new Date(Date.now() + 60_000) });
    const res = await org.client.post('/api/agents/@idem/agent/run', body, { headers: { 'Idempotency-Key': 'stuck' } });
    expectProblem(res, 409, 'idempotency_in_progress');
    expect((await runs()).filter((r) => r.input.topic === 'z')).to.have.length(0);
  });

  it('checks permissions first on every request, replays included', async () => {
    const headers = { 'Idempotency-Key': 'launch-perm' };
    const first = await org.client.post('/api/agents/@idem/agent/run', { input: { topic: 'p' } }, { headers });
    expect(first.status).to.equal(201);
    const viewer = await newMember(api, org, 'viewer');
    expectProblem(await viewer.client.post('/api/agents/@idem/agent/run', { input: { topic: 'p' } }, { headers }), 403, 'forbidden');
  });

  it('shapes a replayed run for the caller replaying it: current state, 404 if it may not see it', async () => {
    const headers = { 'Idempotency-Key': 'launch-shape' };
    const body = { input: { topic: 's' } };
    const first = await org.client.post('/api/agents/@idem/agent/run', body, { headers });
    await api
      .knex('runs')
      .where({ id: first.body.id })
      .update({ status: 'failed', error: 'changed meanwhile', started_at: new Date(), finished_at: new Date() });
    const again = await org.client.post('/api/agents/@idem/agent/run', body, { headers });
    expect(again.status).to.equal(201);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body).to.include({ id: first.body.id, status: 'failed', error: 'changed meanwhile' });
    // A member without runs:read-all holds agents:run but cannot read the owner's run.
    const member = await newMember(api, org);
    expectProblem(await member.client.post('/api/agents/@idem/agent/run', body, { headers }), 404, 'not_found');
  });

  it('refuses the header on operations that do not honour it, ignores it on reads and /api/auth/*', async () => {
    const headers = { 'Idempotency-Key': 'nope' };
    const orgs = await org.client.post('/api/orgs', { name: 'x' }, { headers });
    expectProblem(orgs, 400, 'idempotency_not_supported');
    expect(orgs.body.param).to.equal('Idempotency-Key');
    expectProblem(await org.client.post('/api/api-keys', { name: 'k' }, { headers }), 400, 'idempotency_not_supported');
    expectProblem(await org.client.request('DELETE', '/api/api-keys/key_missing', { headers }), 400, 'idempotency_not_supported');
    expect((await org.client.get('/api/runs', { headers })).status).to.equal(200);
    expect((await org.client.get('/api/auth/session', { headers })).status).to.equal(200);
    const signIn = await new (await import('../support/api.ts')).Client(api.url).post(
      '/api/auth/sign-in/email',
      { email: org.email, password: 'correct horse battery' },
      { headers },
    );
    expect(signIn.status).to.equal(200);
  });

  it('refuses a key longer than 255 characters', async () => {
    const res = await org.client.post('/api/agents/@idem/agent/run', { input: { topic: 'k' } }, { headers: { 'Idempotency-Key': 'k'.repeat(256) } });
    expectProblem(res, 400, 'invalid_idempotency_key');
    const ok = await org.client.post('/api/agents/@idem/agent/run', { input: { topic: 'k' } }, { headers: { 'Idempotency-Key': 'k'.repeat(255) } });
    expect(ok.status).to.equal(201);
  });

  it('still consumes a rate-limit point on a replay', async () => {
    const key = await newKey(api, org.client, { name: 'rl' });
    const headers = { 'Idempotency-Key': 'rl-1' };
    const first = await key.client.post('/api/agents/@idem/agent/run', { input: { topic: 'rl' } }, { headers });
    const replay = await key.client.post('/api/agents/@idem/agent/run', { input: { topic: 'rl' } }, { headers });
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    const remaining = (r: typeof first) => Number(/remaining=(\d+)/.exec(r.headers.get('ratelimit') ?? '')![1]);
    expect(remaining(replay)).to.equal(remaining(first) - 1);
  });

  it('replays a webhook creation with the same secret, stored encrypted', async () => {
    const headers = { 'Idempotency-Key': 'hook-1' };
    const body = { level: 'space', spaceId: org.defaultSpaceId, url: 'https://127.0.0.1:9/hook', events: ['run.success'] };
    const first = await org.client.post('/api/webhooks', body, { headers });
    expect(first.status, first.text).to.equal(201);
    const again = await org.client.post('/api/webhooks', body, { headers });
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body.secret).to.equal(first.body.secret);
    const stored = await api.knex('idempotency_keys').where({ org_id: org.orgId, key: 'hook-1' }).first();
    expect(stored.response_body).not.to.contain(first.body.secret.slice(6));
    expect(await api.knex('webhooks').where({ org_id: org.orgId })).to.have.length(1);
  });
});
