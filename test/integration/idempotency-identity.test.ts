// Issue 28, hole 3 (SPEC 8.8.3, 8.8.5): an Idempotency-Key is shared by the identities of one
// organization and space, but a secret an answer shows once (a webhook's `secret`, an OAuth
// client's `client_secret`, a remote run's `sink.secret`) is replayed only to the identity that
// made the request; any other identity gets the replay without it.
import { expect } from 'chai';
import { resourceRoutes } from '../../api/routes/index.ts';
import { newKey, newMember, newOrg, newUser, startTestApi, type TestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { workerEnv } from '../support/worker.ts';

type Org = Awaited<ReturnType<typeof newOrg>>;
type Key = Awaited<ReturnType<typeof newKey>>;

describe('idempotency: secrets shown once go back only to their maker', function () {
  this.timeout(60_000);
  let api: TestApi;
  let org: Org;
  let keyA: Key;
  let keyB: Key;

  before(async () => {
    api = await startTestApi(workerEnv());
    org = await newOrg(api, 'idem-identity');
    // Two API keys of the same space (the default one), with the same scopes.
    keyA = await newKey(api, org.client, { name: 'key A' });
    keyB = await newKey(api, org.client, { name: 'key B' });
    await importAgent(org.client, { name: '@idemid/remote' });
  });
  after(async () => {
    await api.knex('runs').where({ org_id: org.orgId }).delete();
    await api.close();
  });

  it('webhooks: another key of the space replays the webhook without its secret; the maker keeps it', async () => {
    const headers = { 'Idempotency-Key': 'hook-shared' };
    const body = { level: 'space', spaceId: org.defaultSpaceId, url: 'https://127.0.0.1:9/hook', events: ['run.success'] };
    const first = await keyA.client.post('/api/webhooks', body, { headers });
    expect(first.status, first.text).to.equal(201);
    expect(first.body.secret).to.match(/^whsec_/);

    const other = await keyB.client.post('/api/webhooks', body, { headers });
    expect(other.status, other.text).to.equal(201);
    expect(other.headers.get('idempotent-replayed')).to.equal('true');
    expect(other.body.id).to.equal(first.body.id);
    expect(other.body).not.to.have.property('secret');
    expect(other.text).not.to.contain(first.body.secret);

    const own = await keyA.client.post('/api/webhooks', body, { headers });
    expect(own.headers.get('idempotent-replayed')).to.equal('true');
    expect(own.body).to.deep.equal(first.body);
    expect(await api.knex('webhooks').where({ org_id: org.orgId })).to.have.length(1);
  });

  it('OAuth clients: another key replays the client without client_secret; the maker keeps it', async () => {
    const headers = { 'Idempotency-Key': 'client-shared' };
    const body = { name: 'Shared CLI', redirect_uris: ['https://app.example.com/cb'] };
    const first = await keyA.client.post('/api/oauth/clients', body, { headers });
    expect(first.status, first.text).to.equal(201);
    expect(first.body.client_secret).to.be.a('string').and.not.equal('');

    const other = await keyB.client.post('/api/oauth/clients', body, { headers });
    expect(other.status, other.text).to.equal(201);
    expect(other.headers.get('idempotent-replayed')).to.equal('true');
    expect(other.body.client_id).to.equal(first.body.client_id);
    expect(other.body).not.to.have.property('client_secret');
    expect(other.text).not.to.contain(first.body.client_secret);

    const own = await keyA.client.post('/api/oauth/clients', body, { headers });
    expect(own.headers.get('idempotent-replayed')).to.equal('true');
    expect(own.body).to.deep.equal(first.body);
  });

  it("remote runs: another key replays the run and its sink without the sink's secret", async () => {
    const headers = { 'Idempotency-Key': 'remote-shared' };
    const body = { packageId: '@idemid/remote', input: {} };
    const first = await keyA.client.post('/api/runs/remote', body, { headers });
    expect(first.status, first.text).to.equal(201);
    expect(first.body.sink.secret).to.match(/^sink_/);

    const other = await keyB.client.post('/api/runs/remote', body, { headers });
    expect(other.status, other.text).to.equal(201);
    expect(other.headers.get('idempotent-replayed')).to.equal('true');
    expect(other.body.id).to.equal(first.body.id);
    expect(other.body.sink.url).to.equal(first.body.sink.url);
    expect(other.body.sink).not.to.have.property('secret');
    expect(other.text).not.to.contain(first.body.sink.secret);

    // The owner's session, in the same space, is another identity too.
    const session = await org.client.post('/api/runs/remote', body, { headers });
    expect(session.headers.get('idempotent-replayed')).to.equal('true');
    expect(session.body.id).to.equal(first.body.id);
    expect(session.text).not.to.contain(first.body.sink.secret);

    const own = await keyA.client.post('/api/runs/remote', body, { headers });
    expect(own.headers.get('idempotent-replayed')).to.equal('true');
    expect(own.body.sink.secret).to.equal(first.body.sink.secret);
  });

  it("a key of another space does not meet this space's keys on an organization-level route", async () => {
    const team = await org.client.post('/api/spaces', { name: 'Idem identity team' });
    expect(team.status, team.text).to.equal(201);
    const teamKey = await newKey(api, org.client.with({ 'X-Space-Id': team.body.id }), { name: 'team key' });
    const headers = { 'Idempotency-Key': 'client-per-space' };
    const body = { name: 'Per-space CLI', redirect_uris: ['https://app.example.com/cb'] };
    const first = await keyA.client.post('/api/oauth/clients', body, { headers });
    expect(first.status, first.text).to.equal(201);
    const elsewhere = await teamKey.client.post('/api/oauth/clients', body, { headers });
    expect(elsewhere.status, elsewhere.text).to.equal(201);
    expect(elsewhere.headers.get('idempotent-replayed')).to.equal(null);
    expect(elsewhere.body.id).not.to.equal(first.body.id);
  });

  // Issue 28 follow-up: a check the handler made is made again before a replay (SPEC 8.8.5).
  it('webhooks: a session that may not create the webhook gets 403, not the replay', async () => {
    const viewer = await newMember(api, org, 'viewer', 'idem-viewer');
    const headers = { 'Idempotency-Key': 'hook-permission' };
    const body = { level: 'space', spaceId: org.defaultSpaceId, url: 'https://127.0.0.1:9/viewer-hook', events: ['run.success'] };
    const first = await org.client.post('/api/webhooks', body, { headers });
    expect(first.status, first.text).to.equal(201);

    const denied = await viewer.client.post('/api/webhooks', body, { headers });
    expectProblem(denied, 403, 'forbidden');
    expect(denied.headers.get('idempotent-replayed')).to.equal(null);
    expect(denied.text).not.to.contain(first.body.id);
    // The same as without the key.
    expectProblem(await viewer.client.post('/api/webhooks', body), 403, 'forbidden');
  });

  it('OAuth clients: a session that holds no role in the space gets not_a_space_member, not the replay', async () => {
    // An organization admin holds oauth-clients:write and a role in every space but the owner's personal one.
    const admin = await newUser(api, 'idem-admin');
    const add = await org.client.post(`/api/orgs/${org.orgId}/members`, { email: admin.email, role: 'admin' });
    expect(add.status, add.text).to.equal(201);
    const personal = await api.knex('spaces').where({ org_id: org.orgId, owner_user_id: org.userId, kind: 'personal' }).first();
    const headers = { 'Idempotency-Key': 'client-space-member' };
    const body = { name: 'Personal CLI', level: 'space', redirect_uris: ['https://app.example.com/cb'] };
    const first = await org.client.with({ 'X-Space-Id': personal.id }).post('/api/oauth/clients', body, { headers });
    expect(first.status, first.text).to.equal(201);

    const denied = await admin.client.with({ 'X-Org-Id': org.orgId, 'X-Space-Id': personal.id }).post('/api/oauth/clients', body, { headers });
    expectProblem(denied, 403, 'not_a_space_member');
    expect(denied.headers.get('idempotent-replayed')).to.equal(null);
    expect(denied.text).not.to.contain(first.body.client_id);
  });

  it("OAuth clients: a session's key in one space does not replay in another space (X-Space-Id)", async () => {
    const team = await org.client.post('/api/spaces', { name: 'Idem identity other' });
    expect(team.status, team.text).to.equal(201);
    const headers = { 'Idempotency-Key': 'client-session-space' };
    const body = { name: 'Space CLI', level: 'space', redirect_uris: ['https://app.example.com/cb'] };
    const inA = await org.client.post('/api/oauth/clients', body, { headers });
    expect(inA.status, inA.text).to.equal(201);
    expect(inA.body.spaceId).to.equal(org.defaultSpaceId);

    const inB = await org.client.with({ 'X-Space-Id': team.body.id }).post('/api/oauth/clients', body, { headers });
    expect(inB.status, inB.text).to.equal(201);
    expect(inB.headers.get('idempotent-replayed')).to.equal(null);
    expect(inB.body.spaceId).to.equal(team.body.id);
    expect(inB.body.id).not.to.equal(inA.body.id);

    const againA = await org.client.post('/api/oauth/clients', body, { headers });
    expect(againA.headers.get('idempotent-replayed')).to.equal('true');
    expect(againA.body.id).to.equal(inA.body.id);
  });

  it('every idempotent route whose answer carries a secret declares it shown once', () => {
    const SECRET_NAME = /secret|password|^key$|^(access|refresh)_?token$/i;
    /** Dotted paths of the properties of `schema` whose names say secret. */
    const secretPaths = (schema: any, prefix = ''): string[] =>
      Object.entries((schema?.properties ?? {}) as Record<string, any>).flatMap(([name, sub]) => [
        ...(SECRET_NAME.test(name) ? [`${prefix}${name}`] : []),
        ...secretPaths(sub, `${prefix}${name}.`),
      ]);
    const idempotent = resourceRoutes.filter((r) => r.idempotent);
    expect(idempotent.length).to.be.greaterThan(0);
    for (const route of idempotent) {
      const paths = Object.entries(route.responses)
        .filter(([status]) => Number(status) < 300)
        .flatMap(([, r]) => secretPaths(r.schema));
      for (const path of paths) expect(route.shownOnce ?? [], `${route.method.toUpperCase()} ${route.path}: ${path}`).to.include(path);
    }
  });
});
