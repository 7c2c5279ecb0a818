// Changes to members from the members page, each as its API operation makes it (the rules of
// shared/identity/members.ts) and on that operation's rate-limit counter: add or remove an
// organization member (owners and admins; anyone may leave), give, change or end a space role
// (spaces:write, within what the person holds). An add refused shows the page again with the
// reason beside the field; the others come back with what happened.
import { ProblemError, problem } from '../../../shared/errors.ts';
import {
  addOrgMemberByEmail,
  addSpaceMember,
  removeOrgMemberAs,
  removeSpaceMember,
  type SpaceManager,
  updateSpaceMember,
} from '../../../shared/identity/members.ts';
import { isOrgAdmin } from '../../../shared/identity/tenancy.ts';
import { ORG_ROLES, type OrgRole } from '../../../shared/permissions.ts';
import { DEFAULT_RATE_LIMITS } from '../../rate-limits.ts';
import { setFlash } from '../flash.ts';
import { definePage, type PageContext, type PageDef, redirect } from '../page.ts';
import { parseRole, renderMembersPage, spaceManager } from './members.ts';

const PATH = '/orgs/:orgId/spaces/:spaceId/members';
const WRITE = DEFAULT_RATE_LIMITS.write;
type UserParam = { userId: string };

function back(page: PageContext<unknown>): string {
  return `${page.space!.base}/members`;
}

/** A one-button change: what it did (`change` says it), or its refusal, said on the page it came from; anything else is thrown. */
async function flashRefusal(page: PageContext<unknown>, what: string, change: () => Promise<string>): Promise<void> {
  try {
    setFlash(page.ctx, { kind: 'ok', text: await change() });
  } catch (err) {
    if (!(err instanceof ProblemError) || err.status >= 500) throw err;
    setFlash(page.ctx, { kind: 'error', text: `${what}: ${err.detail}` });
  }
}

/**
 * A one-button change to a space member (`:userId`) by a manager of the space, counted as the
 * API's `apiRoute`. `read` takes the form (a bad one throws: the error page) and returns the
 * change, made as the manager, which says what it did; a refusal is said on the members page.
 */
function spaceMemberChange(
  action: string,
  apiRoute: string,
  what: string,
  read: (page: PageContext<UserParam>) => (by: SpaceManager) => Promise<string>,
): PageDef<UserParam> {
  return definePage<UserParam>({
    method: 'post',
    path: `${PATH}/space/:userId/${action}`,
    context: 'space',
    scope: 'spaces:write',
    rateLimit: { key: apiRoute, rule: WRITE },
    async handler(page) {
      const change = read(page);
      const by = await spaceManager(page);
      await flashRefusal(page, what, () => change(by));
      redirect(page, back(page));
    },
  });
}

export const orgMemberAdd = definePage({
  method: 'post',
  path: `${PATH}/org/add`,
  context: 'space',
  rateLimit: { key: 'POST /api/orgs/:orgId/members', rule: WRITE },
  async handler(page) {
    const { org, orgRole } = page.space!;
    if (!isOrgAdmin(orgRole)) throw problem('forbidden', 'Only organization owners and admins can do this');
    const form = { email: (page.form.get('email') ?? '').trim(), role: page.form.get('role') ?? '' };
    const refuse = (errors: Record<string, string>) => renderMembersPage(page, { forms: { org: { ...form, errors } }, status: 400 });
    if (!form.email.includes('@')) return refuse({ 'member-email': 'Give the email address of an account.' });
    if (!(ORG_ROLES as readonly string[]).includes(form.role)) return refuse({ 'member-role': 'Choose a role.' });
    try {
      const m = await addOrgMemberByEmail(page.ctx.services.knex, org.id, orgRole, form.email, form.role as OrgRole);
      setFlash(page.ctx, { kind: 'ok', text: `${m.email} joined ${org.name} as ${m.role}, with the member role in the default space.` });
      redirect(page, back(page));
    } catch (err) {
      if (!(err instanceof ProblemError) || err.status >= 500) throw err;
      return refuse(err.code === 'forbidden' ? { 'member-role': err.detail } : { 'member-email': err.detail });
    }
  },
});

export const orgMemberRemove = definePage<UserParam>({
  method: 'post',
  path: `${PATH}/org/:userId/remove`,
  context: 'space',
  rateLimit: { key: 'DELETE /api/orgs/:orgId/members/:userId', rule: WRITE },
  async handler(page) {
    const { org, orgRole } = page.space!;
    const self = page.params.userId === page.user!.id;
    if (!self && !isOrgAdmin(orgRole)) throw problem('forbidden', 'Only organization owners and admins can do this');
    const caller = { orgId: org.id, userId: page.user!.id, role: orgRole };
    const { knex, workflows } = page.ctx.services;
    let left = false;
    await flashRefusal(page, 'Not removed', async () => {
      await removeOrgMemberAs(knex, workflows, caller, page.params.userId);
      left = self;
      return self ? `You left ${org.name}.` : `Removed the member from ${org.name}; their API keys here are revoked.`;
    });
    redirect(page, left ? '/console' : back(page));
  },
});

export const spaceMemberAdd = definePage({
  method: 'post',
  path: `${PATH}/space/add`,
  context: 'space',
  scope: 'spaces:write',
  rateLimit: { key: 'POST /api/spaces/:spaceId/members', rule: WRITE },
  async handler(page) {
    const form = { userId: page.form.get('userId') ?? '', role: page.form.get('role') ?? '' };
    const refuse = (errors: Record<string, string>) => renderMembersPage(page, { forms: { space: { ...form, errors } }, status: 400 });
    const choice = parseRole(form.role);
    if (!choice) return refuse({ 'space-role': 'Choose a role.' });
    try {
      await addSpaceMember(page.ctx.services.knex, await spaceManager(page), form.userId, choice);
      setFlash(page.ctx, { kind: 'ok', text: `Gave the role in ${page.space!.space.name}.` });
      redirect(page, back(page));
    } catch (err) {
      if (!(err instanceof ProblemError) || err.status >= 500) throw err;
      return refuse(err.param === 'custom_role_id' || err.code === 'forbidden' ? { 'space-role': err.detail } : { 'space-member': err.detail });
    }
  },
});

export const spaceMemberRole = spaceMemberChange('role', 'PATCH /api/spaces/:spaceId/members/:userId', 'Role not changed', (page) => {
  const choice = parseRole(page.form.get('role'));
  if (!choice) throw problem('validation_failed', 'Choose a role.');
  return async (by) => {
    const { knex, workflows } = page.ctx.services;
    await updateSpaceMember(knex, workflows, by, page.params.userId, choice);
    return 'Changed the role.';
  };
});

export const spaceMemberRemove = spaceMemberChange('remove', 'DELETE /api/spaces/:spaceId/members/:userId', 'Not removed', (page) => async (by) => {
  const { knex, workflows } = page.ctx.services;
  await removeSpaceMember(knex, workflows, by, page.params.userId);
  return `Ended the role in ${page.space!.space.name}.`;
});
