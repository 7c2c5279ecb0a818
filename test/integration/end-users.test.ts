// SPEC 2.9, 4.8, 5.6, 8.7: end-users, cursor pagination, impersonation and its audit trail.
import { expect } from 'chai';
import { newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';

describe('end-users', function () {
  this.timeout(30_000);
  let api: TestApi;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    api = await startTestApi();
    org = await newOrg(api);
  });
  after(async () => {
    await api.knex('runs').where({ org_id: org.orgId }).delete();
    await api.close();
  });

  it('creates, reads, updates and deletes end-users of the space', async () => {
    const created = await org.client.post('/api/end-users', { externalId: 'cust-1', name: 'Ada' });
    expect(created.status).to.equal(201);
    expect(created.body).to.include({ object: 'end_user', externalId: 'cust-1', name: 'Ada', spaceId: org.defaultSpaceId });
    expect(created.body.id).to.match(/^eu_/);
    expectProblem(await org.client.post('/api/end-users', { externalId: 'cust-1', name: 'Twin' }), 409, 'conflict');
    expectProblem(await org.client.post('/api/end-users', { name: 'No id' }), 400, 'validation_failed');
    expect((await org.client.get(`/api/end-users/${created.body.id}`)).body.name).to.equal('Ada');
    const patched = await org.client.patch(`/api/end-users/${created.body.id}`, { name: 'Ada L.' });
    expect(patched.body).to.include({ name: 'Ada L.', externalId: 'cust-1' });
    expect((await org.client.delete(`/api/end-users/${created.body.id}`)).status).to.equal(204);
    expectProblem(await org.client.get(`/api/end-users/${created.body.id}`), 404, 'not_found');
  });

  it('pages newest first with startingAfter and endingBefore and Link headers', async () => {
    const fresh = await newOrg(api, 'pages');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await fresh.client.post('/api/end-users', { externalId: `p-${i}`, name: `P${i}` })).body.id);
    const newestFirst = [...ids].reverse();
    const first = await fresh.client.get('/api/end-users?limit=2');
    expect(first.body.data.map((e: any) => e.id)).to.deep.equal(newestFirst.slice(0, 2));
    expect(first.body.hasMore).to.equal(true);
    expect(first.headers.get('link')).to.contain(`startingAfter=${newestFirst[1]}`).and.contain('rel="next"');
    const second = await fresh.client.get(`/api/end-users?limit=2&startingAfter=${newestFirst[1]}`);
    expect(second.body.data.map((e: any) => e.id)).to.deep.equal(newestFirst.slice(2, 4));
    expect(second.headers.get('link')).to.contain(`endingBefore=${newestFirst[2]}`).and.contain('rel="prev"');
    const back = await fresh.client.get(`/api/end-users?limit=2&endingBefore=${newestFirst[2]}`);
    expect(back.body.data.map((e: any) => e.id)).to.deep.equal(newestFirst.slice(0, 2));
    const last = await fresh.client.get(`/api/end-users?limit=2&startingAfter=${newestFirst[3]}`);
    expect(last.body.data.map((e: any) => e.id)).to.deep.equal([newestFirst[4]]);
    expect(last.body.hasMore).to.equal(false);
    expect((await fresh.client.get('/api/end-users?limit=500')).body.data).to.have.length(5); // out of range: the default, 20
    expectProblem(await fresh.client.get('/api/end-users?startingAfter=eu_nope'), 400, 'validation_failed');
  });

  it('enforces end-users scopes and answers 404 across spaces and organizations', async () => {
    const eu = await org.client.post('/api/end-users', { externalId: 'scoped', name: 'S' });
    const viewer = await newMember(api, org, 'viewer');
    expect((await viewer.client.get(`/api/end-users/${eu.body.id}`)).status).to.equal(200);
    expectProblem(await viewer.client.post('/api/end-users', { externalId: 'v', name: 'V' }), 403, 'forbidden');
    expectProblem(await viewer.client.delete(`/api/end-users/${eu.body.id}`), 403, 'forbidden');
    const other = await newOrg(api, 'other');
    expectProblem(await other.client.get(`/api/end-users/${eu.body.id}`), 404, 'not_found');
    const team = await org.client.post('/api/spaces', { name: 'EU team' });
    expectProblem(await org.client.with({ 'X-Space-Id': team.body.id }).get(`/api/end-users/${eu.body.id}`), 404, 'not_found');
  });

  it('honours Idempotency-Key on creation', async () => {
    const headers = { 'Idempotency-Key': 'eu-create-1' };
    const a = await org.client.post('/api/end-users', { externalId: 'idem', name: 'I' }, { headers });
    const b = await org.client.post('/api/end-users', { externalId: 'idem', name: 'I' }, { headers });
    expect(a.status).to.equal(201);
    expect(b.headers.get('idempotent-replayed')).to.equal('true');
    expect(b.body.id).to.equal(a.body.id);
  });

  it('runs requests as the end-user with Service-User: its runs belong to it, it sees only them, each request is audited', async () => {
    await importAgent(org.client, { name: '@eu/agent' });
    const key = await newKey(api, org.client, { name: 'backend' });
    const alice = (await org.client.post('/api/end-users', { externalId: 'alice', name: 'Alice' })).body.id;
    const bob = (await org.client.post('/api/end-users', { externalId: 'bob', name: 'Bob' })).body.id;
    const asAlice = key.client.with({ 'Service-User': alice, 'User-Agent': 'backend-test/1' });
    const asBob = key.client.with({ 'Service-User': bob });
    const aliceRun = await asAlice.post('/api/agents/@eu/agent/run', { input: {} });
    expect(aliceRun.status).to.equal(201);
    expect(aliceRun.body.endUserId).to.equal(alice);
    expect(aliceRun.body.actor).to.deep.equal({ type: 'end_user', id: alice });
    const bobRun = await asBob.post('/api/agents/@eu/agent/run', { input: {} });
    expect((await asAlice.get('/api/runs')).body.data.map((r: any) => r.id)).to.deep.equal([aliceRun.body.id]);
    expectProblem(await asAlice.get(`/api/runs/${bobRun.body.id}`), 404, 'not_found');
    const audit = await org.client.get(`/api/orgs/${org.orgId}/impersonation-audit?limit=100`);
    expect(audit.status).to.equal(200);
    const aliceEntries = audit.body.data.filter((e: any) => e.endUserId === alice);
    expect(aliceEntries.map((e: any) => `${e.method} ${e.path}`)).to.include.members(['POST /api/agents/@eu/agent/run', 'GET /api/runs']);
    expect(aliceEntries[0]).to.include({ keyId: key.id, userAgent: 'backend-test/1', spaceId: org.defaultSpaceId });
    expect(aliceEntries[0].requestId).to.match(/^req_/);
    const member = await newMember(api, org);
    expectProblem(await member.client.get(`/api/orgs/${org.orgId}/impersonation-audit`), 403, 'forbidden');
  });
});
