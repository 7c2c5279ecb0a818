// Organizations, spaces and roles: SPEC 4.8 member role change rules and 404 across tenants.
import { expect } from 'chai';
import { newMember, newOrg, newUser, startTestApi, type TestApi } from '../support/api.ts';
import { expectProblem } from '../support/problem.ts';

describe('organizations, spaces and roles', () => {
  let api: TestApi;
  let org: Awaited<ReturnType<typeof newOrg>>;
  before(async () => {
    api = await startTestApi();
    org = await newOrg(api);
  });
  after(() => api.close());

  it('creates an organization with a default space and the caller as owner', async () => {
    const list = await org.client.get('/api/orgs');
    const mine = list.body.data.find((o: any) => o.id === org.orgId);
    expect(mine).to.include({ role: 'owner', defaultSpaceId: org.defaultSpaceId });
    const spaces = await org.client.get('/api/spaces');
    expect(spaces.body.data.map((s: any) => s.kind)).to.have.members(['default', 'personal']);
  });

  it('adds existing users by email; only owners and admins may, only owners add owners', async () => {
    const member = await newMember(api, org);
    const stranger = await newUser(api, 'stranger');
    expectProblem(await member.client.post(`/api/orgs/${org.orgId}/members`, { email: stranger.email, role: 'member' }), 403, 'forbidden');
    const admin = await newMember(api, org, 'member', 'admin');
    await api.knex('org_members').where({ org_id: org.orgId, user_id: admin.userId }).update({ role: 'admin' });
    expectProblem(await admin.client.post(`/api/orgs/${org.orgId}/members`, { email: stranger.email, role: 'owner' }), 403, 'forbidden');
    const added = await admin.client.post(`/api/orgs/${org.orgId}/members`, { email: stranger.email, role: 'member' });
    expect(added.status).to.equal(201);
    expectProblem(await admin.client.post(`/api/orgs/${org.orgId}/members`, { email: stranger.email, role: 'member' }), 409, 'already_member');
    expectProblem(await org.client.post(`/api/orgs/${org.orgId}/members`, { email: 'nobody@example.com', role: 'member' }), 404, 'not_found');
  });

  it('keeps the last owner', async () => {
    expectProblem(await org.client.delete(`/api/orgs/${org.orgId}/members/${org.userId}`), 409, 'last_owner');
  });

  it("answers 404 for another organization's members, roles and spaces", async () => {
    const other = await newOrg(api, 'other');
    expectProblem(await org.client.get(`/api/orgs/${other.orgId}/members`), 404, 'not_found');
    expectProblem(await org.client.get(`/api/orgs/${other.orgId}/roles`), 404, 'not_found');
    expectProblem(await org.client.post(`/api/orgs/${other.orgId}/members`, { email: org.email, role: 'owner' }), 404, 'not_found');
    expectProblem(await org.client.get(`/api/spaces/${other.defaultSpaceId}/members`), 404, 'not_found');
    expectProblem(await org.client.patch(`/api/spaces/${other.defaultSpaceId}/members/${other.userId}`, { preset_role: 'viewer' }), 404, 'not_found');
    const listed = await org.client.get('/api/spaces');
    expect(listed.body.data.map((s: any) => s.id)).not.to.include(other.defaultSpaceId);
  });

  it("shows members only the spaces where they hold a role, and never another user's personal space", async () => {
    const team = await org.client.post('/api/spaces', { name: 'Secret team' });
    const member = await newMember(api, org);
    const seen = (await member.client.get('/api/spaces')).body.data;
    expect(seen.map((s: any) => s.id))
      .to.include(org.defaultSpaceId)
      .and.not.include(team.body.id);
    expect(seen.filter((s: any) => s.kind === 'personal').map((s: any) => s.ownerUserId)).to.deep.equal([member.userId]);
    expectProblem(await member.client.get(`/api/spaces/${team.body.id}/members`), 404, 'not_found');
    expectProblem(await member.client.post('/api/spaces', { name: 'mine' }), 403, 'forbidden');
  });

  describe("changing a space member's role (SPEC 4.8)", () => {
    it('answers 404 when no explicit membership row exists', async () => {
      const team = await org.client.post('/api/spaces', { name: 'Empty team' });
      const member = await newMember(api, org);
      const res = await org.client.patch(`/api/spaces/${team.body.id}/members/${member.userId}`, { preset_role: 'viewer' });
      expectProblem(res, 404, 'not_found');
    });

    it('returns the membership shape on success', async () => {
      const member = await newMember(api, org);
      const res = await org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${member.userId}`, { preset_role: 'builder' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ object: 'space_member', userId: member.userId, preset_role: 'builder', custom_role_id: null });
    });

    it('lets the new role grant only permissions the caller holds', async () => {
      // A custom role holding spaces:write but not spaces:delete manages members below it.
      const role = await org.client.post(`/api/orgs/${org.orgId}/roles`, {
        name: 'manager',
        scopes: ['spaces:read', 'spaces:write', 'agents:read', 'runs:read'],
      });
      expect(role.status).to.equal(201);
      const manager = await newMember(api, org);
      await org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${manager.userId}`, { custom_role_id: role.body.id });
      const target = await newMember(api, org, 'viewer');
      // viewer holds scopes the manager lacks (e.g. files:read): not grantable by the manager.
      const promote = await manager.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${target.userId}`, { preset_role: 'admin' });
      expectProblem(promote, 403, 'forbidden');
      const within = await org.client.post(`/api/orgs/${org.orgId}/roles`, { name: 'reader', scopes: ['agents:read'] });
      // The target's current role (viewer) is one the manager could not have granted: 403 as well.
      expectProblem(
        await manager.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${target.userId}`, { custom_role_id: within.body.id }),
        403,
        'forbidden',
      );
      // Once the target holds a role inside the manager's, the manager may change it.
      await org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${target.userId}`, { custom_role_id: within.body.id });
      const ok = await manager.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${target.userId}`, { custom_role_id: role.body.id });
      expect(ok.status).to.equal(200);
      expect(ok.body.custom_role_id).to.equal(role.body.id);
    });

    it("refuses changing one's own role with 403", async () => {
      const admin = await newMember(api, org, 'admin');
      const res = await admin.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${admin.userId}`, { preset_role: 'viewer' });
      expectProblem(res, 403, 'forbidden');
    });

    it('answers 404 for a custom_role_id that is not a role bundle of the organization', async () => {
      const member = await newMember(api, org);
      const other = await newOrg(api, 'other');
      const foreign = await other.client.post(`/api/orgs/${other.orgId}/roles`, { name: 'foreign', scopes: ['agents:read'] });
      for (const id of ['role_missing', foreign.body.id]) {
        const res = await org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${member.userId}`, { custom_role_id: id });
        expectProblem(res, 404, 'not_found');
        expect(res.body.param).to.equal('custom_role_id');
      }
    });

    it('needs exactly one of preset_role and custom_role_id', async () => {
      const member = await newMember(api, org);
      for (const body of [{}, { preset_role: 'viewer', custom_role_id: 'role_x' }, { preset_role: 'emperor' }]) {
        expectProblem(await org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${member.userId}`, body), 400, 'validation_failed');
      }
    });
  });
});
