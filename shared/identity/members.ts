// Members of an organization and of its spaces (SPEC 3.3, 4.8): the rules the member routes and
// the console's members page share, so a change made through either door is checked the same
// way. The caller's organization role, or what it holds in the space, comes from the door (the
// API computes it with X-View-As, the console from the session).
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { CustomRole, OrgMember, type Space, SpaceMember } from '../db/models.ts';
import { problem } from '../errors.ts';
import { isSubset, type OrgRole, type Scope, SPACE_ROLE_SCOPES, type SpaceRole } from '../permissions.ts';
import { recheckScheduleAccess } from '../schedules/access.ts';
import { addOrgMember, customRoleScopes, memberScopes, removeOrgMember } from './tenancy.ts';
import { findUserByEmail } from './users.ts';

export interface OrgMemberRow {
  user_id: string;
  email: string;
  name: string;
  role: OrgRole;
  created_at: Date;
}

/** The organization's members with their name and email (keyed by `m.user_id`, `m.created_at`). */
export function orgMembers(knex: Knex, orgId: string): Knex.QueryBuilder {
  return knex('org_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.org_id', orgId)
    .select('m.user_id', 'u.email', 'u.name', 'm.role', 'm.created_at');
}

/** Adds the account using `email` with `role`; `callerRole` must already be an owner's or admin's (only an owner adds an owner). */
export async function addOrgMemberByEmail(knex: Knex, orgId: string, callerRole: OrgRole, email: string, role: OrgRole): Promise<OrgMemberRow> {
  if (role === 'owner' && callerRole !== 'owner') throw problem('forbidden', 'Only an owner can add an owner');
  const user = await findUserByEmail(knex, email);
  if (!user) throw problem('not_found', { detail: `No account uses ${email}`, param: 'email' });
  if (await OrgMember.query(knex).findOne({ org_id: orgId, user_id: user.id })) {
    throw problem('already_member', `${user.email} already belongs to this organization`);
  }
  const m = await addOrgMember(knex, orgId, user.id, role);
  return { ...m, email: user.email, name: user.name };
}

/**
 * Removes a member (their keys in the organization are revoked, their schedules re-checked).
 * `callerRole` must already be an owner's or admin's unless the caller leaves; only an owner
 * removes an owner, and the last owner stays.
 */
export async function removeOrgMemberAs(
  knex: Knex,
  workflows: Client,
  caller: { orgId: string; userId: string; role: OrgRole },
  userId: string,
): Promise<void> {
  const target = await OrgMember.query(knex).findOne({ org_id: caller.orgId, user_id: userId });
  if (!target) throw problem('not_found', 'No such member');
  if (target.role === 'owner') {
    if (userId !== caller.userId && caller.role !== 'owner') throw problem('forbidden', 'Only an owner can remove an owner');
    const owners = await OrgMember.query(knex).where({ org_id: caller.orgId, role: 'owner' }).resultSize();
    if (owners <= 1) throw problem('last_owner', 'The organization would have no owner left');
  }
  await removeOrgMember(knex, caller.orgId, userId);
  await recheckScheduleAccess(knex, workflows, caller.orgId, userId);
}

/** A space role: a preset or a custom role bundle of the organization (exactly one). */
export interface RoleChoice {
  preset_role?: SpaceRole | null;
  custom_role_id?: string | null;
}

/** Scopes a role choice grants; a custom role must belong to the organization (404 otherwise). */
export async function roleChoiceScopes(knex: Knex, orgId: string, choice: RoleChoice): Promise<ReadonlySet<Scope>> {
  if (choice.preset_role) return SPACE_ROLE_SCOPES[choice.preset_role];
  const role = await CustomRole.query(knex).findOne({ id: choice.custom_role_id ?? '', org_id: orgId });
  if (!role) throw problem('not_found', { detail: 'No such custom role in this organization', param: 'custom_role_id' });
  return customRoleScopes(role);
}

/** The space and what the caller holds there (`spaces:write` already checked by the door). */
export interface SpaceManager {
  space: Space;
  held: ReadonlySet<Scope>;
  userId: string;
}

/** The explicit members of a space (keyed by `user_id`). */
export function spaceMembers(knex: Knex, space: Pick<Space, 'id' | 'org_id'>): Knex.QueryBuilder {
  return knex('space_members').where({ space_id: space.id, org_id: space.org_id });
}

/** Gives an organization member a role in the space; the role may only grant what the caller holds there. */
export async function addSpaceMember(knex: Knex, by: SpaceManager, userId: string, choice: RoleChoice): Promise<SpaceMember> {
  const { space, held } = by;
  if (space.kind === 'personal') throw problem('forbidden', 'A personal space has no other members');
  if (!(await OrgMember.query(knex).findOne({ org_id: space.org_id, user_id: userId }))) {
    throw problem('not_found', { detail: 'No such member in this organization', param: 'userId' });
  }
  if (!isSubset(await roleChoiceScopes(knex, space.org_id, choice), held)) {
    throw problem('forbidden', 'The role grants permissions you do not hold in this space');
  }
  if (await SpaceMember.query(knex).findOne({ space_id: space.id, user_id: userId })) {
    throw problem('already_member', 'The user already holds a role in this space; change it with PATCH');
  }
  return SpaceMember.query(knex).insertAndFetch({
    space_id: space.id,
    user_id: userId,
    org_id: space.org_id,
    preset_role: choice.preset_role ?? null,
    custom_role_id: choice.custom_role_id ?? null,
  });
}

/**
 * Changes an explicit membership's role (SPEC 4.8): never one's own; the new role may only grant
 * what the caller holds, and the current one must be one the caller could have granted.
 */
export async function updateSpaceMember(knex: Knex, workflows: Client, by: SpaceManager, userId: string, choice: RoleChoice): Promise<SpaceMember> {
  const { space, held } = by;
  const current = await SpaceMember.query(knex).findOne({ space_id: space.id, user_id: userId, org_id: space.org_id });
  if (!current) throw problem('not_found', 'No explicit membership for this user in the space');
  if (userId === by.userId) throw problem('forbidden', 'You cannot change your own role');
  const next = await roleChoiceScopes(knex, space.org_id, choice);
  if (!isSubset(next, held)) throw problem('forbidden', 'The new role grants permissions you do not hold in this space');
  if (!isSubset(await memberScopes(knex, current), held)) {
    throw problem('forbidden', "The member's current role holds permissions you could not have granted");
  }
  const [updated] = await SpaceMember.query(knex)
    .patch({ preset_role: choice.preset_role ?? null, custom_role_id: choice.custom_role_id ?? null })
    .where({ space_id: space.id, user_id: userId })
    .returning('*');
  await recheckScheduleAccess(knex, workflows, space.org_id, userId);
  return updated as unknown as SpaceMember;
}

/** Ends an explicit membership; the member's role must be one the caller could have granted. */
export async function removeSpaceMember(knex: Knex, workflows: Client, by: SpaceManager, userId: string): Promise<void> {
  const { space, held } = by;
  const current = await SpaceMember.query(knex).findOne({ space_id: space.id, user_id: userId, org_id: space.org_id });
  if (!current) throw problem('not_found', 'No explicit membership for this user in the space');
  if (!isSubset(await memberScopes(knex, current), held)) {
    throw problem('forbidden', "The member's role holds permissions you could not have granted");
  }
  await SpaceMember.query(knex).delete().where({ space_id: space.id, user_id: userId });
  await recheckScheduleAccess(knex, workflows, space.org_id, userId);
}
