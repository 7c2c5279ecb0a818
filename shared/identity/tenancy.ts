// Organizations, spaces and who holds what where. Every query filters on the organization.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { ApiKey, CustomRole, OrgMember, Organization, Space, SpaceMember } from '../db/models.ts';
import { newId } from '../ids.ts';
import { type OrgRole, ORG_ROLE_SCOPES, type Scope, SPACE_ROLE_SCOPES, type SpaceRole, isScope } from '../permissions.ts';

export async function orgRole(knex: Knex, orgId: string, userId: string): Promise<OrgRole | undefined> {
  const m = await OrgMember.query(knex).findOne({ org_id: orgId, user_id: userId });
  return m?.role;
}

export function isOrgAdmin(role: OrgRole | undefined): boolean {
  return role === 'owner' || role === 'admin';
}

export function orgScopes(role: OrgRole | undefined): ReadonlySet<Scope> {
  return role ? ORG_ROLE_SCOPES[role] : new Set();
}

/** The space, when it belongs to the organization. */
export async function findSpace(knex: Knex, orgId: string, spaceId: string): Promise<Space | undefined> {
  return await Space.query(knex).findOne({ id: spaceId, org_id: orgId });
}

export function customRoleScopes(role: CustomRole): Set<Scope> {
  return new Set(role.scopes.filter(isScope));
}

/**
 * What a user holds in a space, or null for no role at all. Org owners and admins act as
 * `admin` in every shared space; a personal space belongs to its owner alone.
 */
export async function spaceScopes(knex: Knex, userId: string, space: Space, role: OrgRole | undefined): Promise<ReadonlySet<Scope> | null> {
  if (!role) return null;
  if (space.kind === 'personal') return space.owner_user_id === userId ? SPACE_ROLE_SCOPES.admin : null;
  if (isOrgAdmin(role)) return SPACE_ROLE_SCOPES.admin;
  const m = await SpaceMember.query(knex).findOne({ space_id: space.id, user_id: userId });
  if (!m) return null;
  return memberScopes(knex, m);
}

export async function memberScopes(knex: Knex, m: SpaceMember): Promise<ReadonlySet<Scope>> {
  if (m.preset_role) return SPACE_ROLE_SCOPES[m.preset_role as SpaceRole] ?? new Set();
  const custom = await CustomRole.query(knex).findOne({ id: m.custom_role_id!, org_id: m.org_id });
  return custom ? customRoleScopes(custom) : new Set();
}

async function ensurePersonalSpace(trx: Knex, orgId: string, userId: string): Promise<void> {
  const existing = await Space.query(trx).findOne({ org_id: orgId, owner_user_id: userId, kind: 'personal' });
  if (!existing) {
    await Space.query(trx).insert({ id: newId('spc'), org_id: orgId, name: 'Personal', kind: 'personal', owner_user_id: userId });
  }
}

/** Creates an organization with its default space; the creator becomes owner. */
export async function createOrganization(knex: Knex, name: string, ownerUserId: string): Promise<{ org: Organization; defaultSpace: Space }> {
  return knex.transaction(async (trx) => {
    // The creator is kept: the instance model serves the organizations the instance owner created (shared/models/resolve.ts).
    const org = await Organization.query(trx).insertAndFetch({ id: randomUUID(), name, created_by_user_id: ownerUserId });
    const defaultSpace = await Space.query(trx).insertAndFetch({ id: newId('spc'), org_id: org.id, name: 'Default', kind: 'default' });
    await OrgMember.query(trx).insert({ org_id: org.id, user_id: ownerUserId, role: 'owner' });
    await ensurePersonalSpace(trx, org.id, ownerUserId);
    return { org, defaultSpace };
  });
}

/** Adds a user to an organization: an explicit `member` role in the default space, and a personal space. */
export async function addOrgMember(knex: Knex, orgId: string, userId: string, role: OrgRole): Promise<OrgMember> {
  return knex.transaction(async (trx) => {
    const member = await OrgMember.query(trx).insertAndFetch({ org_id: orgId, user_id: userId, role });
    const def = await Space.query(trx).findOne({ org_id: orgId, kind: 'default' });
    if (def) await SpaceMember.query(trx).insert({ space_id: def.id, user_id: userId, org_id: orgId, preset_role: 'member' });
    await ensurePersonalSpace(trx, orgId, userId);
    return member;
  });
}

/** Removes a member: their API keys in the organization are revoked and their space roles end. */
export async function removeOrgMember(knex: Knex, orgId: string, userId: string): Promise<{ revokedKeys: number }> {
  return knex.transaction(async (trx) => {
    const revokedKeys = await ApiKey.query(trx).patch({ revoked_at: new Date() }).where({ org_id: orgId, created_by: userId }).whereNull('revoked_at');
    await SpaceMember.query(trx).delete().where({ org_id: orgId, user_id: userId });
    await OrgMember.query(trx).delete().where({ org_id: orgId, user_id: userId });
    return { revokedKeys };
  });
}

export interface MemberOrganization {
  id: string;
  name: string;
  role: OrgRole;
  default_space_id: string;
}

/** The organizations a user belongs to, oldest first, with their role and default space: GET /api/orgs and the console's picker. */
export function memberOrganizations(knex: Knex, userId: string): Knex.QueryBuilder {
  return knex('org_members as m')
    .join('organizations as o', 'o.id', 'm.org_id')
    .join('spaces as s', function () {
      this.on('s.org_id', 'o.id').andOnVal('s.kind', 'default');
    })
    .where('m.user_id', userId)
    .select('o.id', 'o.name', 'm.role', 's.id as default_space_id')
    .orderBy('o.created_at');
}

/**
 * The spaces of the organization a user can enter: every shared space for its owners and
 * admins, the spaces where they hold a role for others, and their own personal space
 * (GET /api/spaces and the console's picker).
 */
export function enterableSpaces(knex: Knex, orgId: string, userId: string, role: OrgRole | undefined): Knex.QueryBuilder {
  return knex('spaces')
    .where('org_id', orgId)
    .where((w) => {
      w.where({ kind: 'personal', owner_user_id: userId });
      if (isOrgAdmin(role)) w.orWhereNot('kind', 'personal');
      else w.orWhereIn('id', knex('space_members').select('space_id').where({ user_id: userId }));
    });
}
