// SPEC 4.8 (PATCH /api/spaces/{id}/members/{userId}: the member role change rules) and SPEC 5.2
// (X-View-As: sessions of owners and admins preview a lesser role; API keys get 400
// view_as_unsupported), one test per rule. Instance-level OIDC tokens with X-View-As are
// covered by test/integration/oidc-tokens.test.ts.
import { expect } from 'chai';
import { packageFiles, skillManifest, uniqueScope, zip } from '../fixtures/packages/build.ts';
import { type Client, newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { SPACE_ROLE_SCOPES } from '../../shared/permissions.ts';

type Org = Awaited<ReturnType<typeof newOrg>>;

describe('space member roles and X-View-As', () => {
  let api: TestApi;
  let org: Org;
  /** A custom role that manages members and holds exactly what `member` and `viewer` hold. */
  let managerRoleId: string;

  const patchRole = (client: Client, userId: string, body: Record<string, unknown>, spaceId = org.defaultSpaceId) =>
    client.patch(`/api/spaces/${spaceId}/members/${userId}`, body);

  async function manager() {
    const m = await newMember(api, org, 'member', 'manager');
    const set = await patchRole(org.client, m.userId, { custom_role_id: managerRoleId });
    expect(set.status, set.text).to.equal(200);
    return m;
  }

  before(async () => {
    api = await startTestApi();
    org = await newOrg(api);
    const scopes = [...new Set([...SPACE_ROLE_SCOPES.member, ...SPACE_ROLE_SCOPES.viewer, 'spaces:write'])];
    const role = await org.client.post(`/api/orgs/${org.orgId}/roles`, { name: 'member manager', scopes });
    expect(role.status, role.text).to.equal(201);
    managerRoleId = role.body.id;
  });
  after(() => api.close());

  describe("SPEC 4.8: changing a member's role", () => {
    it('answers {object, userId, preset_role, custom_role_id} and the new role takes effect', async () => {
      const target = await newMember(api, org, 'viewer');
      const res = await patchRole(org.client, target.userId, { preset_role: 'builder' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ object: 'space_member', userId: target.userId, preset_role: 'builder', custom_role_id: null });
      const me = await target.client.get('/api/me');
      expect(me.body.scopes).to.include('agents:write');
    });

    it('404 when no explicit membership row exists (an org admin acting as admin has none)', async () => {
      const orgAdmin = await newMember(api, org, 'member', 'org-admin');
      await api.knex('space_members').where({ space_id: org.defaultSpaceId, user_id: orgAdmin.userId }).delete();
      await api.knex('org_members').where({ org_id: org.orgId, user_id: orgAdmin.userId }).update({ role: 'admin' });
      expect((await orgAdmin.client.get('/api/me')).status).to.equal(200);
      expectProblem(await patchRole(org.client, orgAdmin.userId, { preset_role: 'viewer' }), 404, 'not_found');
      const team = await org.client.post('/api/spaces', { name: 'No rows' });
      const member = await newMember(api, org);
      expectProblem(await patchRole(org.client, member.userId, { preset_role: 'viewer' }, team.body.id), 404, 'not_found');
      expectProblem(await patchRole(org.client, 'usr_nobody', { preset_role: 'viewer' }), 404, 'not_found');
    });

    it('403 when the new role grants a permission the caller does not hold', async () => {
      const m = await manager();
      const target = await newMember(api, org, 'viewer');
      expectProblem(await patchRole(m.client, target.userId, { preset_role: 'builder' }), 403, 'forbidden');
      const ok = await patchRole(m.client, target.userId, { preset_role: 'member' });
      expect(ok.status, ok.text).to.equal(200);
    });

    it("403 when the member's current role is one the caller could not have granted, even to lower it", async () => {
      const m = await manager();
      const target = await newMember(api, org, 'builder');
      expectProblem(await patchRole(m.client, target.userId, { preset_role: 'viewer' }), 403, 'forbidden');
      expect((await api.knex('space_members').where({ space_id: org.defaultSpaceId, user_id: target.userId }).first()).preset_role).to.equal('builder');
    });

    it("403 when changing one's own role, even to a lesser one", async () => {
      const m = await manager();
      expectProblem(await patchRole(m.client, m.userId, { preset_role: 'viewer' }), 403, 'forbidden');
      const admin = await newMember(api, org, 'admin');
      expectProblem(await patchRole(admin.client, admin.userId, { preset_role: 'member' }), 403, 'forbidden');
    });

    it('404 when custom_role_id names no role bundle of the organization', async () => {
      const target = await newMember(api, org);
      const other = await newOrg(api, 'other');
      const foreign = await other.client.post(`/api/orgs/${other.orgId}/roles`, { name: 'foreign', scopes: ['agents:read'] });
      for (const id of ['role_unknown', foreign.body.id]) {
        const res = await patchRole(org.client, target.userId, { custom_role_id: id });
        expectProblem(res, 404, 'not_found');
        expect(res.body.param).to.equal('custom_role_id');
      }
    });

    it('403 without spaces:write in the space (a builder manages no members)', async () => {
      const builder = await newMember(api, org, 'builder');
      const target = await newMember(api, org, 'viewer');
      expectProblem(await patchRole(builder.client, target.userId, { preset_role: 'member' }), 403, 'forbidden');
    });
  });

  describe('SPEC 5.2: X-View-As', () => {
    it("previews a lesser role on a session of an owner: the effective permissions are the role's", async () => {
      const asViewer = org.client.with({ 'X-View-As': 'viewer' });
      const me = await asViewer.get('/api/me');
      expect(me.status, me.text).to.equal(200);
      expect(me.body.viewAs).to.equal('viewer');
      expect(new Set(me.body.scopes)).to.deep.equal(SPACE_ROLE_SCOPES.viewer);
      const archive = await zip(packageFiles(skillManifest(`${uniqueScope('va')}/s`)));
      expectProblem(await uploadPackage(asViewer, archive), 403, 'forbidden');
    });

    it('applies to member role changes: an owner previewing viewer or builder cannot change roles, previewing admin can', async () => {
      const target = await newMember(api, org, 'viewer');
      for (const role of ['viewer', 'member', 'builder']) {
        const res = await patchRole(org.client.with({ 'X-View-As': role }), target.userId, { preset_role: 'member' });
        expectProblem(res, 403, 'forbidden');
      }
      const ok = await patchRole(org.client.with({ 'X-View-As': 'admin' }), target.userId, { preset_role: 'member' });
      expect(ok.status, ok.text).to.equal(200);
    });

    it("keeps at organization level what a member of the previewed role holds there, and nothing of an owner's", async () => {
      const viewer = await newMember(api, org, 'viewer');
      expect((await viewer.client.get('/api/models')).status).to.equal(200);
      const preview = org.client.with({ 'X-View-As': 'viewer' });
      const models = await preview.get('/api/models');
      expect(models.status, models.text).to.equal(200);
      expectProblem(
        await preview.post('/api/models', { name: 'x', provider: 'openai-compatible', baseUrl: 'https://api.example.com/v1', model: 'm' }),
        403,
        'forbidden',
      );
      expectProblem(await preview.post('/api/spaces', { name: 'Previewed' }), 403, 'forbidden');
    });

    it('is open to organization admins as well as owners', async () => {
      const admin = await newMember(api, org, 'member', 'org-admin');
      await api.knex('org_members').where({ org_id: org.orgId, user_id: admin.userId }).update({ role: 'admin' });
      const me = await admin.client.with({ 'X-View-As': 'member' }).get('/api/me');
      expect(me.status, me.text).to.equal(200);
      expect(new Set(me.body.scopes)).to.deep.equal(SPACE_ROLE_SCOPES.member);
    });

    it('is refused to anyone else: 403 for an organization member, whatever their space role', async () => {
      const spaceAdmin = await newMember(api, org, 'admin');
      const res = await spaceAdmin.client.with({ 'X-View-As': 'viewer' }).get('/api/me');
      expectProblem(res, 403, 'forbidden');
      expect(res.body.param).to.equal('X-View-As');
    });

    it('with an API key: 400 view_as_unsupported', async () => {
      const key = await newKey(api, org.client);
      for (const path of ['/api/me', '/api/agents', '/api/models']) {
        const res = await key.client.get(path, { headers: { 'X-View-As': 'viewer' } });
        expectProblem(res, 400, 'view_as_unsupported');
        expect(res.body.param).to.equal('X-View-As');
      }
    });

    it('names a preset space role: anything else is 400 validation_failed', async () => {
      const res = await org.client.get('/api/me', { headers: { 'X-View-As': 'emperor' } });
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.param).to.equal('X-View-As');
    });
  });
});
