// SPEC 2.2, 4.3, 5.3 and DESIGN.md: API keys, their scopes and their life.
import { expect } from 'chai';
import { isWellFormedApiKey } from '../../shared/api-key-format.ts';
import { sha256Hex } from '../../shared/crypto.ts';
import { KEY_GRANTABLE_SCOPES, ORG_ROLE_SCOPES, SPACE_ROLE_SCOPES } from '../../shared/permissions.ts';
import { newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { expectProblem } from '../support/problem.ts';

describe('API keys', () => {
  let api: TestApi;
  let org: Awaited<ReturnType<typeof newOrg>>;
  before(async () => {
    api = await startTestApi();
    org = await newOrg(api);
  });
  after(() => api.close());

  it('returns the key once, in the svc_ format with a valid checksum, and stores only its SHA-256', async () => {
    const res = await org.client.post('/api/api-keys', { name: 'ci' });
    expect(res.status).to.equal(201);
    expect(res.body.key).to.match(/^svc_[0-9A-Za-z]{36}$/);
    expect(isWellFormedApiKey(res.body.key)).to.equal(true);
    expect(res.body.keyPrefix).to.equal(res.body.key.slice(0, 12));
    expect(res.body).to.include({ name: 'ci', expiresAt: null });
    const row = await api.knex('api_keys').where({ id: res.body.id }).first();
    expect(row.key_hash).to.equal(sha256Hex(res.body.key));
    expect(JSON.stringify(row)).not.to.contain(res.body.key);
    const list = await org.client.get('/api/api-keys');
    const listed = list.body.data.find((k: any) => k.id === res.body.id);
    expect(listed.keyPrefix).to.equal(res.body.keyPrefix);
    expect(listed).not.to.have.property('key');
  });

  it('gives every grantable scope the creator holds when scopes are omitted or empty', async () => {
    // An owner holds `admin` in the space and the organization-level scopes.
    const held = KEY_GRANTABLE_SCOPES.filter((s) => SPACE_ROLE_SCOPES.admin.has(s) || ORG_ROLE_SCOPES.owner.has(s));
    expect(held).to.include.members(['credential-proxy:call', 'llm-proxy:call', 'models:read']);
    for (const body of [{ name: 'all' }, { name: 'all', scopes: [] }]) {
      const { body: created } = await newKey(api, org.client, body);
      expect(created.scopes).to.have.members(held);
      expect(created.scopes).not.to.include('api-keys:create');
    }
    const available = await org.client.get('/api/api-keys/available-scopes');
    const all = await newKey(api, org.client, { name: 'all' });
    expect(available.body.scopes).to.have.members(all.body.scopes);
  });

  it('refuses a scope no key can carry with 400 invalid_request, and drops unheld scopes silently', async () => {
    for (const scopes of [['api-keys:create'], ['org-webhooks:write'], ['agents:teleport']]) {
      const res = await org.client.post('/api/api-keys', { name: 'x', scopes });
      expectProblem(res, 400, 'invalid_request');
      expect(res.body.param).to.equal('scopes');
    }
    const member = await newMember(api, org, 'builder');
    const { body } = await newKey(api, member.client, { name: 'narrow', scopes: ['agents:read', 'spaces:delete', 'webhooks:write'] });
    expect(body.scopes).to.have.members(['agents:read', 'webhooks:write']);
  });

  it("authenticates with the key and intersects its scopes with the creator's current role at each request", async () => {
    const builder = await newMember(api, org, 'builder');
    const key = await newKey(api, builder.client, { name: 'build', scopes: ['agents:read', 'agents:write', 'webhooks:write', 'runs:read'] });
    const before = await key.client.get('/api/me');
    expect(before.status).to.equal(200);
    expect(before.body.credential).to.include({ type: 'api_key', id: key.id });
    expect(before.body.scopes).to.have.members(['agents:read', 'agents:write', 'webhooks:write', 'runs:read']);
    // Downgrade the creator to viewer: the key loses what a viewer lacks, immediately.
    const down = await org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${builder.userId}`, { preset_role: 'viewer' });
    expect(down.status).to.equal(200);
    const after = await key.client.get('/api/me');
    expect(after.body.scopes).to.have.members(['agents:read', 'runs:read']);
    // Upgrading again restores the key's ceiling, never more than its own scopes.
    await org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${builder.userId}`, { preset_role: 'admin' });
    const again = await key.client.get('/api/me');
    expect(again.body.scopes).to.have.members(['agents:read', 'agents:write', 'webhooks:write', 'runs:read']);
  });

  it('does not let an API key create a key', async () => {
    const key = await newKey(api, org.client);
    const res = await key.client.post('/api/api-keys', { name: 'child' });
    expectProblem(res, 403, 'forbidden');
  });

  it('refuses a key in a personal space with 409 personal_space_takes_no_keys', async () => {
    const spaces = await org.client.get('/api/spaces');
    const personal = spaces.body.data.find((s: any) => s.kind === 'personal');
    expect(personal.ownerUserId).to.equal(org.userId);
    const res = await org.client.with({ 'X-Space-Id': personal.id }).post('/api/api-keys', { name: 'nope' });
    expectProblem(res, 409, 'personal_space_takes_no_keys');
  });

  it('honours expiresAt: a past date is refused, an expired key no longer authenticates', async () => {
    const past = await org.client.post('/api/api-keys', { name: 'old', expiresAt: '2020-01-01T00:00:00Z' });
    expectProblem(past, 400, 'validation_failed');
    expect(past.body.errors[0].field).to.equal('expiresAt');
    const soon = new Date(Date.now() + 3600_000).toISOString();
    const key = await newKey(api, org.client, { name: 'soon', expiresAt: soon });
    expect(key.body.expiresAt).to.equal(soon);
    expect((await key.client.get('/api/me')).status).to.equal(200);
    await api
      .knex('api_keys')
      .where({ id: key.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    expectProblem(await key.client.get('/api/me'), 401, 'unauthorized');
  });

  it('revokes immediately', async () => {
    const key = await newKey(api, org.client);
    expect((await key.client.get('/api/me')).status).to.equal(200);
    expect((await org.client.delete(`/api/api-keys/${key.id}`)).status).to.equal(204);
    expectProblem(await key.client.get('/api/me'), 401, 'unauthorized');
    expectProblem(await org.client.delete(`/api/api-keys/${key.id}`), 404, 'not_found');
  });

  it("revokes a member's keys when they leave the organization", async () => {
    const member = await newMember(api, org, 'builder');
    const key = await newKey(api, member.client);
    expect((await key.client.get('/api/me')).status).to.equal(200);
    expect((await org.client.delete(`/api/orgs/${org.orgId}/members/${member.userId}`)).status).to.equal(204);
    expectProblem(await key.client.get('/api/me'), 401, 'unauthorized');
    const row = await api.knex('api_keys').where({ id: key.id }).first();
    expect(row.revoked_at).to.be.instanceOf(Date);
  });

  it("hides other spaces' and organizations' keys (404)", async () => {
    const other = await newOrg(api, 'other');
    const theirs = await newKey(api, other.client);
    expectProblem(await org.client.delete(`/api/api-keys/${theirs.id}`), 404, 'not_found');
    expect((await theirs.client.get('/api/me')).status).to.equal(200);
  });
});
