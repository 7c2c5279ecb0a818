// SPEC 4.2, 5.5, 8.8 and DESIGN.md section 7: OAuth client management (`/api/oauth/clients`)
// on the real stack: levels, the secret shown once, idempotent creation, redirect URI and scope
// rules, visibility by organization and space, and revocation on delete.
import { expect } from 'chai';
import { clientMetadata, type OAuthClientRow } from '../../shared/oidc/clients.ts';
import { type Client, newKey, newMember, newOrg, newUser, startTestApi, type TestApi } from '../support/api.ts';
import { expectProblem } from '../support/problem.ts';
import { TEST_SECRETS_KEY } from '../support/worker.ts';

const FIELDS = ['id', 'client_id', 'name', 'level', 'orgId', 'spaceId', 'redirect_uris', 'scopes', 'allowSignup', 'public', 'createdAt', 'updatedAt'];

describe('OAuth clients', function () {
  this.timeout(60_000);
  let api: TestApi;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let key: Awaited<ReturnType<typeof newKey>>;
  let admin: Client;

  before(async () => {
    api = await startTestApi();
    org = await newOrg(api, 'oac-owner');
    key = await newKey(api, org.client, { name: 'oauth clients' });
    const user = await newUser(api, 'oac-admin');
    const add = await org.client.post(`/api/orgs/${org.orgId}/members`, { email: user.email, role: 'admin' });
    expect(add.status, add.text).to.equal(201);
    admin = user.client.with({ 'X-Org-Id': org.orgId, 'X-Space-Id': org.defaultSpaceId });
  });
  after(() => api.close());

  const create = (body: Record<string, unknown>, client: Client = org.client, headers: Record<string, string> = {}) =>
    client.post('/api/oauth/clients', { name: 'CLI', redirect_uris: ['https://app.example.com/cb'], ...body }, { headers });
  const row = (id: string): Promise<OAuthClientRow> => api.knex('oauth_clients').where({ id }).first();

  it('creates an org-level client and shows its secret once, sealed at rest', async () => {
    const res = await create({ scopes: ['agents:read', 'runs:read'] });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.have.all.keys([...FIELDS, 'client_secret']);
    expect(res.body).to.deep.include({
      name: 'CLI',
      level: 'org',
      orgId: org.orgId,
      spaceId: null,
      redirect_uris: ['https://app.example.com/cb'],
      scopes: ['agents:read', 'runs:read'],
      allowSignup: false,
      public: false,
    });
    expect(res.body.id).to.match(/^oac_/);
    expect(res.body.client_id).to.match(/^[0-9A-Za-z]{32}$/);
    expect(res.body.client_secret).to.be.a('string').with.length.greaterThan(40);

    const read = await key.client.get(`/api/oauth/clients/${res.body.id}`);
    expect(read.status, read.text).to.equal(200);
    expect(read.body).to.have.all.keys(FIELDS);
    const stored = await row(res.body.id);
    expect(stored.client_secret_sealed).to.be.a('string').and.not.contain(res.body.client_secret);
    expect(stored.created_by).to.equal(org.userId);
    // The authorization server unseals the same secret.
    const meta = clientMetadata(stored, Buffer.from(TEST_SECRETS_KEY, 'base64'));
    expect(meta).to.include({ client_id: res.body.client_id, client_secret: res.body.client_secret, token_endpoint_auth_method: 'client_secret_basic' });
  });

  it('creates a public client without secret (PKCE only)', async () => {
    const res = await create({ public: true, redirect_uris: ['http://127.0.0.1:8765/cb', 'http://localhost/cb', 'http://[::1]:9/cb'] });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).not.to.have.property('client_secret');
    expect(res.body.public).to.equal(true);
    const stored = await row(res.body.id);
    expect(stored.client_secret_sealed).to.equal(null);
    expect(clientMetadata(stored, undefined)).to.include({ token_endpoint_auth_method: 'none' });
  });

  it('accepts no redirect URI (a device-flow client)', async () => {
    const res = await create({ redirect_uris: [] });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.redirect_uris).to.deep.equal([]);
  });

  it('replays a creation with the same Idempotency-Key, secret included, without a second client', async () => {
    const headers = { 'Idempotency-Key': `oac-${Date.now()}` };
    const first = await create({ name: 'Idempotent' }, org.client, headers);
    const again = await create({ name: 'Idempotent' }, org.client, headers);
    expect(first.status, first.text).to.equal(201);
    expect(again.status).to.equal(201);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    expect(await api.knex('oauth_clients').where({ org_id: org.orgId, name: 'Idempotent' }).count('* as n').first()).to.deep.equal({ n: 1 });
    expectProblem(await create({ name: 'Other' }, org.client, headers), 422, 'idempotency_conflict');
  });

  it('refuses redirect URIs that are not https (or http to loopback), carry a fragment or are too many', async () => {
    for (const uri of ['http://app.example.com/cb', 'https://app.example.com/cb#x', 'com.example.app:/cb', 'not a url', 'http://localhost.evil.com/cb']) {
      const res = await create({ redirect_uris: ['https://ok.example.com/cb', uri] });
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors, uri).to.have.length(1);
      expect(res.body.errors[0].field, uri).to.equal('redirect_uris.1');
    }
    const many = Array.from({ length: 21 }, (_, i) => `https://app.example.com/cb${i}`);
    expectProblem(await create({ redirect_uris: many }), 400, 'validation_failed');
    // The published pattern refuses what a URL parser would (the fuzzer found a host of control
    // and non-ASCII characters that the older pattern admitted and the handler refused).
    for (const uri of ['https://exa%mple.com/cb', 'https://\u0094\u00e0i6-\u0002', 'https://1.2.3.4.5/cb', 'https://x.com:65536/cb']) {
      const unparsable = await create({ redirect_uris: [uri] });
      expectProblem(unparsable, 400, 'validation_failed');
      expect(unparsable.body.errors[0], uri).to.include({ field: 'redirect_uris.0', code: 'invalid_format' });
    }
  });

  it('refuses unknown scopes, bad names and unknown fields as validation_failed', async () => {
    const unknown = await create({ scopes: ['agents:read', 'agents:fly'] });
    expectProblem(unknown, 400, 'validation_failed');
    expect(unknown.body.errors[0]).to.include({ field: 'scopes.1', code: 'invalid_value' });
    expectProblem(await create({ name: '' }), 400, 'validation_failed');
    expectProblem(await create({ name: 'x'.repeat(201) }), 400, 'validation_failed');
    expectProblem(await create({ level: 'galaxy' }), 400, 'validation_failed');
    expectProblem(await create({ client_secret: 'mine' }), 400, 'validation_failed');
  });

  it('creates a space-level client in X-Space-Id with the allowlist only', async () => {
    const ok = await create({ level: 'space', scopes: ['agents:run', 'runs:read'], allowSignup: true });
    expect(ok.status, ok.text).to.equal(201);
    expect(ok.body).to.include({ level: 'space', spaceId: org.defaultSpaceId, orgId: org.orgId, allowSignup: true });

    const beyond = await create({ level: 'space', scopes: ['agents:run', 'runs:delete'] });
    expectProblem(beyond, 400, 'invalid_request');
    expect(beyond.body.detail).to.contain('runs:delete').and.not.contain('agents:run');

    const noSpace = await create({ level: 'space' }, org.client.with({ 'X-Space-Id': '' }));
    expectProblem(noSpace, 400, 'space_required');
    expect(noSpace.body.param).to.equal('X-Space-Id');
    expectProblem(await create({ level: 'space' }, org.client.with({ 'X-Space-Id': 'spc_nope' })), 400, 'validation_failed');
    const foreign = await newOrg(api, 'oac-foreign');
    expectProblem(await create({ level: 'space' }, org.client.with({ 'X-Space-Id': foreign.defaultSpaceId })), 403, 'not_a_space_member');
  });

  it("pins a space-level client made with an API key to the key's space", async () => {
    const res = await create({ level: 'space', scopes: ['agents:read'] }, key.client);
    expect(res.status, res.text).to.equal(201);
    expect(res.body.spaceId).to.equal(org.defaultSpaceId);
    const other = await org.client.post('/api/spaces', { name: 'Elsewhere' });
    expectProblem(await create({ level: 'space' }, key.client.with({ 'X-Space-Id': other.body.id })), 403, 'forbidden');
  });

  it("lets only an organization owner's session create an instance-level client", async () => {
    expectProblem(await create({ level: 'instance' }, admin), 403, 'forbidden');
    expectProblem(await create({ level: 'instance' }, key.client), 403, 'forbidden');
    const res = await create({ level: 'instance', scopes: ['runs:delete'] });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({ level: 'instance', orgId: org.orgId, spaceId: null });

    // An admin reads it but cannot change or delete it.
    expect((await admin.get(`/api/oauth/clients/${res.body.id}`)).status).to.equal(200);
    expectProblem(await admin.patch(`/api/oauth/clients/${res.body.id}`, { name: 'Mine now' }), 403, 'forbidden');
    expectProblem(await admin.delete(`/api/oauth/clients/${res.body.id}`), 403, 'forbidden');
    expect((await org.client.patch(`/api/oauth/clients/${res.body.id}`, { name: 'Renamed' })).body.name).to.equal('Renamed');
  });

  it('needs the oauth-clients permissions (an organization member has none)', async () => {
    const member = await newMember(api, org);
    expectProblem(await member.client.get('/api/oauth/clients'), 403, 'forbidden');
    expectProblem(await create({}, member.client), 403, 'forbidden');
    const narrow = await newKey(api, org.client, { name: 'read only', scopes: ['oauth-clients:read'] });
    expect((await narrow.client.get('/api/oauth/clients')).status).to.equal(200);
    expectProblem(await create({}, narrow.client), 403, 'forbidden');
  });

  it('lists newest first with cursors, space-level clients only to who can act in their space', async () => {
    const space = await org.client.post('/api/spaces', { name: 'Hidden from the key' });
    const hidden = await create({ level: 'space', name: 'Hidden' }, org.client.with({ 'X-Space-Id': space.body.id }));
    expect(hidden.status, hidden.text).to.equal(201);
    const latest = await create({ name: 'Latest' });

    const all = await org.client.get('/api/oauth/clients?limit=100');
    expect(all.status, all.text).to.equal(200);
    expect(all.body).to.include({ object: 'list', hasMore: false });
    expect(all.body.data[0].id).to.equal(latest.body.id);
    const ids = all.body.data.map((c: { id: string }) => c.id);
    expect(ids).to.include(hidden.body.id);
    for (const c of all.body.data) expect(c).not.to.have.property('client_secret');

    const byKey = await key.client.get('/api/oauth/clients?limit=100');
    expect(byKey.body.data.map((c: { id: string }) => c.id)).to.deep.equal(ids.filter((id: string) => id !== hidden.body.id));
    expectProblem(await key.client.get(`/api/oauth/clients/${hidden.body.id}`), 404, 'not_found');
    expectProblem(await key.client.delete(`/api/oauth/clients/${hidden.body.id}`), 404, 'not_found');

    const first = await org.client.get('/api/oauth/clients?limit=2');
    expect(first.body.data).to.have.length(2);
    expect(first.body.hasMore).to.equal(true);
    expect(first.headers.get('link')).to.contain('rel="next"');
    const second = await org.client.get(`/api/oauth/clients?limit=2&startingAfter=${first.body.data[1].id}`);
    expect(second.body.data.map((c: { id: string }) => c.id)).to.deep.equal(ids.slice(2, 4));
  });

  it('updates name, redirect URIs, scopes and allowSignup with the same rules', async () => {
    const made = await create({ level: 'space', scopes: ['agents:read', 'agents:run'] });
    const path = `/api/oauth/clients/${made.body.id}`;
    const res = await key.client.patch(path, {
      name: 'Renamed',
      redirect_uris: ['http://localhost:3000/cb'],
      scopes: ['agents:read', 'agents:run', 'runs:read'],
      allowSignup: true,
    });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.include({
      name: 'Renamed',
      redirect_uris: ['http://localhost:3000/cb'],
      scopes: ['agents:read', 'agents:run', 'runs:read'],
      allowSignup: true,
      level: 'space',
      client_id: made.body.client_id,
    });
    expect(res.body).not.to.have.property('client_secret');
    expect(Date.parse(res.body.updatedAt)).to.be.greaterThan(Date.parse(made.body.updatedAt));

    expectProblem(await key.client.patch(path, { scopes: ['runs:delete'] }), 400, 'invalid_request');
    expectProblem(await key.client.patch(path, { redirect_uris: ['https://x.example.com/#f'] }), 400, 'validation_failed');
    expectProblem(await key.client.patch(path, { level: 'org' }), 400, 'validation_failed');
    expectProblem(await key.client.patch(path, { public: true }), 400, 'validation_failed');
    expect((await key.client.get(path)).body.name).to.equal('Renamed');
  });

  it('revokes what a client holds when scopes are removed, not when they are added', async () => {
    const made = await create({ scopes: ['agents:read', 'runs:read'] });
    await api.knex('oidc_payloads').insert({ model: 'Grant', id: `g-${made.body.id}`, payload: JSON.stringify({ clientId: made.body.client_id }) });
    await org.client.patch(`/api/oauth/clients/${made.body.id}`, { scopes: ['agents:read', 'runs:read', 'runs:cancel'] });
    expect(await api.knex('oidc_payloads').where({ id: `g-${made.body.id}` })).to.have.length(1);
    await org.client.patch(`/api/oauth/clients/${made.body.id}`, { scopes: ['agents:read'] });
    expect(await api.knex('oidc_payloads').where({ id: `g-${made.body.id}` })).to.have.length(0);
  });

  it('deletes a client with its grants, tokens and codes, and nothing of another client', async () => {
    const doomed = await create({ name: 'Doomed' });
    const kept = await create({ name: 'Kept' });
    const payload = (model: string, id: string, clientId: string) => ({ model, id, payload: JSON.stringify({ clientId, accountId: org.userId }) });
    await api
      .knex('oidc_payloads')
      .insert([
        payload('Grant', `${doomed.body.id}-g`, doomed.body.client_id),
        payload('RefreshToken', `${doomed.body.id}-r`, doomed.body.client_id),
        payload('AuthorizationCode', `${doomed.body.id}-c`, doomed.body.client_id),
        payload('DeviceCode', `${doomed.body.id}-d`, doomed.body.client_id),
        payload('Grant', `${kept.body.id}-g`, kept.body.client_id),
      ]);
    const res = await key.client.delete(`/api/oauth/clients/${doomed.body.id}`);
    expect(res.status, res.text).to.equal(204);
    expect(await row(doomed.body.id)).to.equal(undefined);
    expect(await api.knex('oidc_payloads').whereLike('id', `${doomed.body.id}-%`)).to.have.length(0);
    expect(await api.knex('oidc_payloads').where({ id: `${kept.body.id}-g` })).to.have.length(1);
    expectProblem(await org.client.get(`/api/oauth/clients/${doomed.body.id}`), 404, 'not_found');
    expectProblem(await org.client.delete(`/api/oauth/clients/${doomed.body.id}`), 404, 'not_found');
  });

  it('keeps organizations apart: another organization gets 404 and does not list them', async () => {
    const made = await create({ name: 'Ours' });
    const other = await newOrg(api, 'oac-other');
    const path = `/api/oauth/clients/${made.body.id}`;
    expectProblem(await other.client.get(path), 404, 'not_found');
    expectProblem(await other.client.patch(path, { name: 'Theirs' }), 404, 'not_found');
    expectProblem(await other.client.delete(path), 404, 'not_found');
    const list = await other.client.get('/api/oauth/clients');
    expect(list.body.data).to.deep.equal([]);
    // X-Org-Id of an organization the caller is not in is refused before anything is looked up.
    expectProblem(await other.client.with({ 'X-Org-Id': org.orgId }).get(path), 403, 'forbidden');
    expect((await row(made.body.id)).name).to.equal('Ours');
  });
});
