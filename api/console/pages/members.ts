// Who is in the organization and in this space, with their roles (GET /api/orgs/{id}/members and
// /api/spaces/{id}/members), and the changes the API allows the person: owners and admins add
// and remove organization members; holders of spaces:write give, change and end space roles,
// within what they hold themselves. Every change goes through shared/identity/members.ts, the
// routes' own rules (pages/member-actions.ts).
import type { CustomRole, SpaceMember } from '../../../shared/db/models.ts';
import { type OrgMemberRow, orgMembers, type RoleChoice, type SpaceManager, spaceMembers } from '../../../shared/identity/members.ts';
import { isOrgAdmin, spaceScopes } from '../../../shared/identity/tenancy.ts';
import { ORG_ROLES, SPACE_ROLES, type SpaceRole } from '../../../shared/permissions.ts';
import { formatTime } from '../format.ts';
import { actionButton, csrfField, errorSummary, type FieldErrors, type Option, selectField, textField } from '../forms.ts';
import { type Html, html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, type PageContext } from '../page.ts';

const MAX_ROWS = 500;

export interface MemberForms {
  org?: { email?: string; role?: string; errors?: FieldErrors };
  space?: { userId?: string; role?: string; errors?: FieldErrors };
}

/** What the person holds in the space as the member routes compute it (spaceAccess, without a preview). */
export async function spaceManager(page: PageContext<unknown>): Promise<SpaceManager> {
  const { space, orgRole } = page.space!;
  const held = await spaceScopes(page.ctx.services.knex, page.user!.id, space, orgRole);
  return { space, held: held ?? new Set(), userId: page.user!.id };
}

/** A role choice as a select carries it: `preset:<role>` or `custom:<id>`. */
export function roleValue(m: Pick<SpaceMember, 'preset_role' | 'custom_role_id'>): string {
  return m.preset_role ? `preset:${m.preset_role}` : `custom:${m.custom_role_id}`;
}

export function parseRole(raw: string | null): RoleChoice | undefined {
  const [kind, value] = (raw ?? '').split(':', 2);
  if (kind === 'preset' && (SPACE_ROLES as readonly string[]).includes(value)) return { preset_role: value as SpaceRole };
  if (kind === 'custom' && value) return { custom_role_id: value };
  return undefined;
}

function roleOptions(roles: CustomRole[]): Option[] {
  return [...SPACE_ROLES.map((r) => ({ value: `preset:${r}`, label: r })), ...roles.map((r) => ({ value: `custom:${r.id}`, label: `${r.name} (custom)` }))];
}

function orgSection(page: PageContext, members: OrgMemberRow[], forms: MemberForms): Html {
  const { org, orgRole, base } = page.space!;
  const admin = isOrgAdmin(orgRole);
  // The last owner stays (the API refuses it), so they are offered no way out.
  const lastOwner = members.filter((m) => m.role === 'owner').length <= 1;
  const rows = members.map((m) => {
    const self = m.user_id === page.user!.id;
    const removable = !(m.role === 'owner' && lastOwner) && (self || (admin && (m.role !== 'owner' || orgRole === 'owner')));
    const remove = removable
      ? actionButton(page, {
          action: `${base}/members/org/${m.user_id}/remove`,
          label: self ? 'Leave' : 'Remove',
          className: 'small danger',
          formClass: 'member-remove',
        })
      : '';
    return html`<tr id="org-member-${m.user_id}"><td>${m.name || m.email}${
      self
        ? html` <span class="muted">(you)\
</span>`
        : ''
    }</td><td>${m.email}</td><td><span class="badge role">${m.role}</span></td><td><time \
datetime="${m.created_at.toISOString()}">${formatTime(m.created_at)}</time></td><td class="actions">${remove}</td>\
</tr>`;
  });
  const f = forms.org ?? {};
  const roles: Option[] = ORG_ROLES.filter((r) => r !== 'owner' || orgRole === 'owner').map((r) => ({ value: r, label: r }));
  const add = admin
    ? html`<form method="post" action="${base}/members/org/add" class="filters" aria-labelledby="org-add-heading"><h3 \
id="org-add-heading" class="visually-hidden">Add to the organization</h3>${csrfField(page)}
${textField({
  id: 'member-email',
  name: 'email',
  label: 'Email of an account',
  type: 'email',
  value: f.email,
  required: true,
  error: f.errors?.['member-email'],
})}
${selectField({ id: 'member-role', name: 'role', label: 'Organization role', value: f.role ?? 'member', options: roles, error: f.errors?.['member-role'] })}
<div class="filter-actions"><button type="submit">Add member</button></div></form>`
    : html`<p class="note">Owners and admins of ${org.name} add and remove its members.</p>`;
  return html`<section aria-labelledby="org-heading">
<h2 id="org-heading">Organization: ${org.name}</h2>
<p class="help">Owners and admins act as admin in every team space. A member removed loses their API keys in the organization at once.</p>
${errorSummary(f.errors, 'The member could not be added')}
<table class="data"><caption class="visually-hidden">Members of the organization</caption><thead><tr><th \
scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Since</th><th scope="col"><span \
class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>
${add}
</section>`;
}

function spaceSection(
  page: PageContext,
  o: { explicit: SpaceMember[]; people: Map<string, OrgMemberRow>; roles: CustomRole[]; canWrite: boolean; forms: MemberForms },
): Html {
  const { space, base } = page.space!;
  if (space.kind === 'personal')
    return html`<section aria-labelledby="space-heading"><h2 id="space-heading">Space: ${space.name}</h2><p \
class="note">A personal space belongs to one person and has no other members.</p></section>`;
  const options = roleOptions(o.roles);
  const roleName = (m: SpaceMember) => m.preset_role ?? `${o.roles.find((r) => r.id === m.custom_role_id)?.name ?? m.custom_role_id} (custom)`;
  const rows = o.explicit.map((m) => {
    const who = o.people.get(m.user_id);
    const self = m.user_id === page.user!.id;
    const change =
      o.canWrite && !self
        ? html`<form method="post" action="${base}/members/space/${m.user_id}/role" class="inline-form \
role-form">${csrfField(page)}<label class="visually-hidden" for="role-${m.user_id}">Role \
of ${who?.email ?? m.user_id}</label><select id="role-${m.user_id}" name="role" \
class="role-select">${options.map(
            (r) =>
              html`<option value="${r.value}"${
                r.value === roleValue(m)
                  ? html` \
selected`
                  : ''
              }>${r.label}</option>`,
          )}</select> <button type="submit" class="small secondary">Change role</button>\
</form>`
        : '';
    const remove = o.canWrite
      ? actionButton(page, { action: `${base}/members/space/${m.user_id}/remove`, label: 'Remove', className: 'small danger', formClass: 'member-remove' })
      : '';
    return html`<tr id="space-member-${m.user_id}"><td>${who ? who.name || who.email : m.user_id}${
      self
        ? html` <span \
class="muted">(you)</span>`
        : ''
    }</td><td>${who?.email ?? ''}</td><td><span class="badge role">${roleName(m)}</span>\
</td><td class="actions">${change} ${remove}</td></tr>`;
  });
  const f = o.forms.space ?? {};
  const candidates = [...o.people.values()].filter((p) => !o.explicit.some((m) => m.user_id === p.user_id));
  const add = o.canWrite
    ? candidates.length
      ? html`<form method="post" action="${base}/members/space/add" class="filters" aria-labelledby="space-add-heading">\
<h3 id="space-add-heading" class="visually-hidden">Give a role in this space</h3>${csrfField(page)}
${selectField({
  id: 'space-member',
  name: 'userId',
  label: 'Organization member',
  value: f.userId,
  options: candidates.map((p) => ({
    value: p.user_id,
    label: `${p.name || p.email} \
(${p.email})`,
  })),
  error: f.errors?.['space-member'],
})}
${selectField({ id: 'space-role', name: 'role', label: 'Space role', value: f.role ?? 'preset:member', options, error: f.errors?.['space-role'] })}
<div class="filter-actions"><button type="submit">Give role</button></div></form>`
      : html`<p class="note">Every member of the organization already holds a role here.</p>`
    : html`<p class="note">Giving and changing roles here needs the spaces:write permission.</p>`;
  return html`<section aria-labelledby="space-heading">
<h2 id="space-heading">Space: ${space.name}</h2>
<p class="help">Roles given here: viewer reads, member runs agents, builder also changes them, admin also manages the \
space. A role can only grant what you hold here.</p>
${errorSummary(f.errors, 'The role could not be given')}
${
  rows.length
    ? html`<table class="data"><caption class="visually-hidden">Members of the space</caption><thead><tr><th \
scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col"><span \
class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p class="empty">No one \
holds an explicit role here; organization owners and admins act as admins.</p>`
}
${add}
</section>`;
}

export async function renderMembersPage(page: PageContext, o: { forms?: MemberForms; status?: number } = {}): Promise<void> {
  const { knex } = page.ctx.services;
  const { org, space, scopes } = page.space!;
  const [members, explicit, roles] = await Promise.all([
    orgMembers(knex, org.id)
      .orderBy([
        { column: 'm.created_at', order: 'asc' },
        { column: 'm.user_id', order: 'asc' },
      ])
      .limit(MAX_ROWS) as Promise<OrgMemberRow[]>,
    spaceMembers(knex, space)
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'user_id', order: 'asc' },
      ])
      .limit(MAX_ROWS) as Promise<SpaceMember[]>,
    knex('custom_roles').where({ org_id: org.id }).orderBy('name') as Promise<CustomRole[]>,
  ]);
  const people = new Map(members.map((m) => [m.user_id, m]));
  const forms = o.forms ?? {};
  sendConsolePage(page, {
    title: 'Members',
    status: o.status,
    current: 'members',
    body: html`<p class="lead">Who can do what in ${org.name} and in ${space.name}.</p>
${orgSection(page, members, forms)}
${spaceSection(page, { explicit, people, roles, canWrite: scopes.has('spaces:write'), forms })}`,
  });
}

export default definePage({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/members',
  context: 'space',
  scope: 'spaces:read',
  nav: { label: 'Members', order: 80 },
  handler: (page) => renderMembersPage(page),
});
