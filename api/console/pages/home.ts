// The console's home: the organizations the person belongs to and the spaces they can enter in
// each (what GET /api/orgs and GET /api/spaces list them), each space leading to its overview.
import { enterableSpaces, type MemberOrganization, memberOrganizations } from '../../../shared/identity/tenancy.ts';
import { html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, spaceBase } from '../page.ts';

const KIND: Record<string, string> = { default: 'default space', team: 'team space', personal: 'your personal space' };

export default definePage({
  method: 'get',
  path: '/',
  context: 'user',
  async handler(page) {
    const { knex } = page.ctx.services;
    const orgs: MemberOrganization[] = await memberOrganizations(knex, page.user!.id);
    const sections = await Promise.all(
      orgs.map(async (o) => {
        const spaces: { id: string; name: string; kind: string }[] = await enterableSpaces(knex, o.id, page.user!.id, o.role).orderBy([
          { column: 'kind', order: 'asc' },
          { column: 'name', order: 'asc' },
        ]);
        const items = spaces.map(
          (s) => html`<li><a href="${spaceBase(o.id, s.id)}/overview">${s.name}</a> <span class="muted">${KIND[s.kind] ?? s.kind}</span></li>`,
        );
        return html`<section class="card" aria-labelledby="org-${o.id}"><h2 id="org-${o.id}">${o.name}</h2><p \
class="muted">You are ${o.role === 'admin' ? 'an admin' : `a ${o.role}`} here.</p><ul class="space-list">${items}</ul>\
</section>`;
      }),
    );
    const empty = html`<p class="lead">You are not a member of any organization yet.</p><p>Create one with <code>POST \
/api/orgs</code>, or ask an owner to add you with your email address, ${page.user!.email}.</p>`;
    sendConsolePage(page, {
      title: 'Choose a space',
      body: orgs.length
        ? html`<p class="lead">Runs, agents and keys live in a space of an organization. Pick one:</p><div class="cards">${sections}</div>`
        : empty,
    });
  },
});
