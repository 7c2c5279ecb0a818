// SPEC 5.2 and 5.6: every error code of the context headers, through real HTTP.
import { expect } from 'chai';
import { newId } from '../../shared/ids.ts';
import { Client, newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { expectProblem } from '../support/problem.ts';

describe('context headers', () => {
  let api: TestApi;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let key: Awaited<ReturnType<typeof newKey>>;
  before(async () => {
    api = await startTestApi();
    org = await newOrg(api);
    key = await newKey(api, org.client);
  });
  after(() => api.close());

  it('needs X-Org-Id on an organization route with a session (400, param X-Org-Id)', async () => {
    const res = await org.client.with({ 'X-Org-Id': '' }).get('/api/spaces');
    expectProblem(res, 400, 'org_required');
    expect(res.body.param).to.equal('X-Org-Id');
  });

  it('refuses an X-Org-Id that is not a UUID', async () => {
    const res = await org.client.with({ 'X-Org-Id': 'acme' }).get('/api/spaces');
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors[0]).to.include({ field: 'X-Org-Id', code: 'invalid_format' });
  });

  it('answers 403 forbidden when the session is not a member of X-Org-Id', async () => {
    const other = await newOrg(api, 'other');
    const res = await org.client.with({ 'X-Org-Id': other.orgId }).get('/api/spaces');
    expectProblem(res, 403, 'forbidden');
  });

  it('needs X-Space-Id on a space-scoped route (400 with param X-Space-Id)', async () => {
    const res = await org.client.with({ 'X-Space-Id': '' }).get('/api/me');
    expectProblem(res, 400, 'space_required');
    expect(res.body.param).to.equal('X-Space-Id');
  });

  it('answers 403 not_a_space_member for a space where the caller holds no role', async () => {
    const team = await org.client.post('/api/spaces', { name: 'Team' });
    const member = await newMember(api, org);
    const res = await member.client.with({ 'X-Space-Id': team.body.id }).get('/api/me');
    expectProblem(res, 403, 'not_a_space_member');
    expect(res.body.param).to.equal('X-Space-Id');
    // The same answer for a space that does not exist or belongs to another organization.
    const other = await newOrg(api, 'other');
    for (const spaceId of [newId('spc'), other.defaultSpaceId]) {
      expectProblem(await org.client.with({ 'X-Space-Id': spaceId }).get('/api/me'), 403, 'not_a_space_member');
    }
  });

  it('pins an API key to its space: another X-Space-Id is 403, its own is fine, X-Org-Id is ignored', async () => {
    const team = await org.client.post('/api/spaces', { name: 'Pinned' });
    expectProblem(await key.client.get('/api/me', { headers: { 'X-Space-Id': team.body.id } }), 403, 'forbidden');
    const own = await key.client.get('/api/me', { headers: { 'X-Space-Id': org.defaultSpaceId } });
    expect(own.status).to.equal(200);
    expect(own.body.spaceId).to.equal(org.defaultSpaceId);
    const other = await newOrg(api, 'other');
    const ignored = await key.client.get('/api/me', { headers: { 'X-Org-Id': other.orgId } });
    expect(ignored.status).to.equal(200);
    expect(ignored.body.orgId).to.equal(org.orgId);
  });

  it('refuses Service-User with a session: 400 header_not_allowed', async () => {
    const res = await org.client.get('/api/me', { headers: { 'Service-User': 'eu_abc' } });
    expectProblem(res, 400, 'header_not_allowed');
    expect(res.body.param).to.equal('Service-User');
  });

  it('refuses a Service-User value not starting with eu_: 400 invalid_end_user_id', async () => {
    const res = await key.client.get('/api/me', { headers: { 'Service-User': 'usr_abc' } });
    expectProblem(res, 400, 'invalid_end_user_id');
  });

  it('refuses an end-user of no space of the key: 403 invalid_end_user; accepts its own end-user', async () => {
    expectProblem(await key.client.get('/api/me', { headers: { 'Service-User': 'eu_doesnotexist' } }), 403, 'invalid_end_user');
    const team = await org.client.post('/api/spaces', { name: 'Elsewhere' });
    const foreign = newId('eu');
    await api.knex('end_users').insert({ id: foreign, org_id: org.orgId, space_id: team.body.id, external_id: 'x1', name: 'Elsewhere' });
    expectProblem(await key.client.get('/api/me', { headers: { 'Service-User': foreign } }), 403, 'invalid_end_user');
    const mine = newId('eu');
    await api.knex('end_users').insert({ id: mine, org_id: org.orgId, space_id: org.defaultSpaceId, external_id: 'x2', name: 'Mine' });
    const ok = await key.client.get('/api/me', { headers: { 'Service-User': mine } });
    expect(ok.status).to.equal(200);
    expect(ok.body.endUserId).to.equal(mine);
  });

  it('refuses X-View-As with an API key: 400 view_as_unsupported', async () => {
    expectProblem(await key.client.get('/api/me', { headers: { 'X-View-As': 'viewer' } }), 400, 'view_as_unsupported');
  });

  it('lets owners preview a lesser role with X-View-As, and refuses it to members', async () => {
    const asViewer = await org.client.get('/api/me', { headers: { 'X-View-As': 'viewer' } });
    expect(asViewer.status).to.equal(200);
    expect(asViewer.body.viewAs).to.equal('viewer');
    expect(asViewer.body.scopes).to.include('runs:read').and.not.include('agents:write');
    const member = await newMember(api, org);
    expectProblem(await member.client.get('/api/me', { headers: { 'X-View-As': 'viewer' } }), 403, 'forbidden');
  });

  it('applies X-View-As on the /api/orgs/{orgId} family: a preview acts as an organization member', async () => {
    const members = `/api/orgs/${org.orgId}/members`;
    const asViewer = { headers: { 'X-View-As': 'viewer' } };
    expect((await org.client.get(members, asViewer)).status, 'a member may list the members').to.equal(200);
    const other = await newOrg(api, 'view-as-target');
    expectProblem(await org.client.post(members, { email: other.email, role: 'member' }, asViewer), 403, 'forbidden');
    expectProblem(await org.client.post(`/api/orgs/${org.orgId}/roles`, { name: 'previewed', scopes: ['runs:read'] }, asViewer), 403, 'forbidden');
    expectProblem(await org.client.get(`/api/orgs/${org.orgId}/impersonation-audit`, asViewer), 403, 'forbidden');
    const member = await newMember(api, org);
    expectProblem(await org.client.delete(`${members}/${member.userId}`, asViewer), 403, 'forbidden');
    expectProblem(await member.client.get(members, asViewer), 403, 'forbidden');
    // An unknown role is refused on every route, those without an organization too.
    expectProblem(await org.client.get(members, { headers: { 'X-View-As': 'overlord' } }), 400, 'validation_failed');
    expectProblem(await org.client.get('/api/orgs', { headers: { 'X-View-As': 'overlord' } }), 400, 'validation_failed');
    // Without the header the owner still manages members.
    const added = await org.client.post(members, { email: other.email, role: 'member' });
    expect(added.status, added.text).to.equal(201);
    expect((await org.client.delete(`${members}/${member.userId}`)).status).to.equal(204);
  });

  it('answers 401 for an unknown, malformed or former-format key', async () => {
    const { generateApiKey } = await import('../../shared/api-key-format.ts');
    for (const bearer of [generateApiKey().key, 'svc_short', `sk_live_${'a'.repeat(30)}`, 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln']) {
      const res = await new Client(api.url, { authorization: `Bearer ${bearer}` }).get('/api/me');
      expectProblem(res, 401, 'unauthorized');
      expect(res.headers.get('www-authenticate')).to.equal('Bearer');
    }
  });
});
