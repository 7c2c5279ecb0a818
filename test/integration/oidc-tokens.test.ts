// OIDC access tokens as API credentials (SPEC 5.1, 5.2, 5.4, 5.5). The tokens are signed here with
// the service's own signing key and carry exactly the claims its authorization server issues
// (test/integration/oidc.test.ts obtains real ones through the browser flow); these tests pin
// what each client level may do on the API.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { importJWK, SignJWT } from 'jose';
import { Client, newMember, newOrg, newUser, PASSWORD, type Res, startTestApi, type TestApi } from '../support/api.ts';
import { loadSigningKeys } from '../../shared/oidc/keys.ts';
import { freePort } from '../../shared/stack/ports.ts';
import { TEST_SECRETS_KEY } from '../support/worker.ts';

describe('OIDC access tokens on the API', () => {
  let api: TestApi;
  let issuer: string;

  async function token(claims: Record<string, unknown>, opts: { audience?: string; expiresIn?: string } = {}): Promise<string> {
    const [jwk] = await loadSigningKeys(api.knex, Buffer.from(TEST_SECRETS_KEY, 'base64'));
    const key = await importJWK(jwk, 'ES256');
    return new SignJWT({ client_id: 'cli', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: jwk.kid, typ: 'at+jwt' })
      .setIssuer(issuer)
      .setAudience(opts.audience ?? `${issuer}/api`)
      .setIssuedAt()
      .setJti(randomBytes(8).toString('hex'))
      .setExpirationTime(opts.expiresIn ?? '1h')
      .sign(key);
  }

  const bearer = (t: string, headers: Record<string, string> = {}) => new Client(api.url, { authorization: `Bearer ${t}`, ...headers });

  async function spaceClient(org: Awaited<ReturnType<typeof newOrg>>, allowSignup = false) {
    const clientId = `cli_${randomBytes(6).toString('hex')}`;
    await api.knex('oauth_clients').insert({
      id: `oac_${randomBytes(12).toString('hex')}`,
      client_id: clientId,
      name: 'Space app',
      level: 'space',
      org_id: org.orgId,
      space_id: org.defaultSpaceId,
      scopes: JSON.stringify(['runs:read', 'agents:run']),
      allow_signup: allowSignup,
      created_by: org.userId,
    });
    return clientId;
  }

  before(async () => {
    const port = await freePort(0);
    issuer = `http://127.0.0.1:${port}`;
    api = await startTestApi({ PORT: String(port), PUBLIC_URL: issuer });
  });
  after(() => api?.close());

  it('takes an instance-level token as the user, with X-Org-Id and X-Space-Id, at most the token scopes', async () => {
    const org = await newOrg(api);
    const t = await token({ sub: org.userId, lvl: 'instance', scope: 'openid runs:read agents:read' });
    const me = await bearer(t, { 'X-Org-Id': org.orgId, 'X-Space-Id': org.defaultSpaceId }).get('/api/me');
    expect(me.status, me.text).to.equal(200);
    expect(me.body.credential).to.deep.equal({ type: 'oidc', id: 'cli', level: 'instance' });
    expect(me.body.userId).to.equal(org.userId);
    expect(me.body.scopes).to.deep.equal(['agents:read', 'runs:read']); // the owner holds more; the token is the ceiling
    const launch = await bearer(t, { 'X-Org-Id': org.orgId, 'X-Space-Id': org.defaultSpaceId }).post('/api/agents/@none/agent/run', { input: {} });
    expect(launch.status).to.equal(403);
    // Like a session, it needs the context headers.
    expect((await bearer(t).get('/api/me')).body.code).to.equal('org_required');
    // The webhooks module takes tokens too, within their scopes.
    const hooks = await token({ sub: org.userId, lvl: 'instance', scope: 'webhooks:read' });
    const listed = await bearer(hooks, { 'X-Org-Id': org.orgId }).get(`/api/webhooks?spaceId=${org.defaultSpaceId}`);
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.body.data).to.deep.equal([]);
    expect((await bearer(t, { 'X-Org-Id': org.orgId }).get(`/api/webhooks?spaceId=${org.defaultSpaceId}`)).status).to.equal(403);
    // X-View-As works for owners' instance-level tokens.
    const viewer = await bearer(t, { 'X-Org-Id': org.orgId, 'X-Space-Id': org.defaultSpaceId, 'X-View-As': 'viewer' }).get('/api/me');
    expect(viewer.body.viewAs).to.equal('viewer');
  });

  it('binds an org-level token to its organization, with token scopes intersected with the current role', async () => {
    const org = await newOrg(api);
    const other = await newOrg(api, 'other');
    const member = await newMember(api, org, 'viewer');
    const t = await token({ sub: member.userId, lvl: 'org', org_id: org.orgId, scope: 'runs:read agents:run models:write' });
    // X-Org-Id naming another organization is ignored: the token is bound.
    const me = await bearer(t, { 'X-Org-Id': other.orgId, 'X-Space-Id': org.defaultSpaceId }).get('/api/me');
    expect(me.status, me.text).to.equal(200);
    expect(me.body.orgId).to.equal(org.orgId);
    expect(me.body.scopes).to.deep.equal(['runs:read']); // a viewer cannot run agents or write models
    expect((await bearer(t, { 'X-View-As': 'viewer', 'X-Space-Id': org.defaultSpaceId }).get('/api/me')).body.code).to.equal('view_as_unsupported');
    // Once the person leaves the organization the token stops working there.
    const removed = await org.client.delete(`/api/orgs/${org.orgId}/members/${member.userId}`);
    expect(removed.status).to.be.oneOf([200, 204]);
    expect((await bearer(t, { 'X-Space-Id': org.defaultSpaceId }).get('/api/me')).status).to.equal(401);
  });

  it('takes a space-level token as its end-user, bound to the space, within the fixed allowlist', async () => {
    const org = await newOrg(api);
    const clientId = await spaceClient(org);
    const eu = await org.client.post('/api/end-users', { externalId: `person-${randomBytes(4).toString('hex')}@example.com`, name: 'Person' });
    expect(eu.status, eu.text).to.equal(201);
    const t = await token({
      sub: eu.body.id,
      lvl: 'space',
      client_id: clientId,
      org_id: org.orgId,
      space_id: org.defaultSpaceId,
      scope: 'runs:read runs:delete agents:run',
    });
    const me = await bearer(t).get('/api/me');
    expect(me.status, me.text).to.equal(200);
    expect(me.body).to.include({ spaceId: org.defaultSpaceId, endUserId: eu.body.id });
    expect(me.body.scopes).to.deep.equal(['agents:run', 'runs:read']); // runs:delete is not in the allowlist
    expect((await bearer(t, { 'Service-User': eu.body.id }).get('/api/me')).body.code).to.equal('header_not_allowed');
    expect((await bearer(t, { 'X-View-As': 'viewer' }).get('/api/me')).body.code).to.equal('view_as_unsupported');
    const elsewhere = await org.client.post('/api/spaces', { name: 'elsewhere' });
    expect((await bearer(t, { 'X-Space-Id': elsewhere.body.id }).get('/api/me')).status).to.equal(403);
    // The end-user removed: the token no longer works.
    await org.client.delete(`/api/end-users/${eu.body.id}`);
    expect((await bearer(t).get('/api/me')).status).to.equal(401);
  });

  it('refuses tokens that are expired, for another audience, or sent in the SSE token parameter', async () => {
    const org = await newOrg(api);
    const ctx = { 'X-Org-Id': org.orgId, 'X-Space-Id': org.defaultSpaceId };
    const expired = await token({ sub: org.userId, lvl: 'instance', scope: 'runs:read' }, { expiresIn: '-1m' });
    expect((await bearer(expired, ctx).get('/api/me')).status).to.equal(401);
    const elsewhere = await token({ sub: org.userId, lvl: 'instance', scope: 'runs:read' }, { audience: 'https://elsewhere.example/api' });
    expect((await bearer(elsewhere, ctx).get('/api/me')).status).to.equal(401);
    const good = await token({ sub: org.userId, lvl: 'instance', scope: 'runs:read' });
    const sse = await new Client(api.url).get(`/api/realtime/runs?token=${good}&orgId=${org.orgId}&spaceId=${org.defaultSpaceId}`);
    expect(sse.status).to.equal(401);
    expect(sse.body.detail).to.match(/API keys only/);
  });

  it("revokes the account's refresh tokens, grants and device codes when the password changes, or leaves the password alone", async () => {
    const user = await newUser(api, 'pw');
    const rows = (id: string) => ({ model: 'RefreshToken', id, payload: JSON.stringify({ accountId: user.userId }), account_id: user.userId });
    await api.knex('oidc_payloads').insert([rows(`a-${user.userId}`), { ...rows(`b-${user.userId}`), model: 'DeviceCode' }]);
    const count = async () => Number((await api.knex('oidc_payloads').where({ account_id: user.userId }).count('* as n'))[0].n);
    expect(await count()).to.equal(2);

    // The revocation cannot run: 500 and the password stays as it was.
    await api.knex.raw('ALTER TABLE oidc_payloads RENAME TO oidc_payloads_away');
    let failed: Res;
    try {
      failed = await user.client.post('/api/auth/change-password', { currentPassword: PASSWORD, newPassword: 'another long password' });
    } finally {
      await api.knex.raw('ALTER TABLE oidc_payloads_away RENAME TO oidc_payloads');
    }
    expect(failed.status).to.equal(500);
    expect(failed.body.code).to.equal('credential_change_revocation_failed');
    expect((await new Client(api.url).post('/api/auth/sign-in/email', { email: user.email, password: PASSWORD })).status).to.equal(200);
    expect(await count()).to.equal(2);

    const changed = await user.client.post('/api/auth/change-password', { currentPassword: PASSWORD, newPassword: 'another long password' });
    expect(changed.status, changed.text).to.equal(200);
    expect(await count()).to.equal(0);
  });
});
