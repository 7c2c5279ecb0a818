// The person's connections in the space (what GET /api/connections lists them: their own, never
// the credential) and the integrations they can connect. A connection that stops working
// (`needs_reconnection`, after a refused OAuth refresh) is shown without reload: the page follows
// the space's realtime stream's `connection_update` frames and reads its list again.
import type { Integration } from '../../../shared/integrations/auths.ts';
import { integrationOf } from '../../../shared/integrations/auths.ts';
import type { ConnectionRow } from '../../../shared/integrations/connections.ts';
import type { PackageRow } from '../../../shared/packages/types.ts';
import { visiblePackagesQuery } from '../../../shared/packages/visibility.ts';
import { callerConnections } from '../../resources/connections.ts';
import { formatTime } from '../format.ts';
import { type Html, html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, type PageContext } from '../page.ts';
import { connectButton, connectHow, connectionBadge } from '../views/connections.ts';

/** Rows shown; a person with more reads the rest through GET /api/connections. */
const MAX_ROWS = 200;

/** The integrations the space sees, with the auths of their manifest in force (GET /api/integrations). */
export async function visibleIntegrations(page: PageContext): Promise<Integration[]> {
  const { knex } = page.ctx.services;
  const { org, space } = page.space!;
  const rows = (await visiblePackagesQuery(knex, org.id, space.id)
    .where('packages.type', 'integration')
    .select('packages.*')
    .orderBy([{ column: 'packages.scope' }, { column: 'packages.name' }])
    .limit(100)) as PackageRow[];
  return Promise.all(rows.map((pkg) => integrationOf(knex, pkg)));
}

function connectionsTable(page: PageContext, rows: ConnectionRow[], names: Map<string, string>): Html {
  if (!rows.length) return html`<p class="empty">You have no connection in this space yet. Connect an integration below; your runs then use it.</p>`;
  const { scopes, base } = page.space!;
  const body = rows.map((c) => {
    const name = names.get(c.integration_package_id) ?? c.integration_package_id;
    const reconnect =
      scopes.has('integrations:connect') && names.has(c.integration_package_id)
        ? connectButton(page, {
            integration: { id: c.integration_package_id, displayName: name },
            authKey: c.auth_key,
            connectionId: c.id,
            className: c.needs_reconnection ? 'small' : 'small secondary',
          })
        : '';
    return html`<tr id="connection-${c.id}" data-connection-id="${c.id}" data-needs-reconnection="${String(c.needs_reconnection)}">
<td>${connectionBadge(c)}</td>
<td><a href="${base}/connections/${c.id}">${c.label}</a><span class="muted"> <code>${c.id}</code></span></td>
<td>${name} <span class="muted">${c.integration_package_id}</span></td>
<td><code>${c.auth_key}</code></td>
<td>${c.scopes.length ? c.scopes.join(', ') : html`<span class="muted">—</span>`}</td>
<td><time datetime="${c.updated_at.toISOString()}">${formatTime(c.updated_at)}</time></td>
<td class="actions">${reconnect}</td>
</tr>`;
  });
  return html`<table class="data"><caption class="visually-hidden">Your connections, newest first</caption><thead><tr>\
<th scope="col">Status</th><th scope="col">Connection</th><th scope="col">Integration</th><th scope="col">Auth</th><th \
scope="col">Scopes</th><th scope="col">Updated</th><th scope="col"><span class="visually-hidden">Actions</span></th>\
</tr></thead><tbody id="connections-rows">${body}</tbody></table>`;
}

function integrationsTable(page: PageContext, integrations: Integration[], rows: ConnectionRow[]): Html {
  const auths = integrations.flatMap((i) => i.auths.map((a) => ({ integration: i, auth: a })));
  if (!auths.length) return html`<p class="empty">No integration is installed in this space. Import one (POST /api/packages/import) to connect it here.</p>`;
  const canConnect = page.space!.scopes.has('integrations:connect');
  const body = auths.map(({ integration, auth }) => {
    const mine = rows.filter((r) => r.integration_package_id === integration.id && r.auth_key === auth.key).length;
    return html`<tr><td>${integration.displayName} <span class="muted">${integration.id}</span></td><td>\
<code>${auth.key}</code></td><td>${connectHow(auth)}</td><td class="num">${mine}</td><td \
class="actions">${canConnect ? connectButton(page, { integration, authKey: auth.key }) : ''}</td></tr>`;
  });
  return html`<table class="data"><caption class="visually-hidden">Integrations you can connect</caption><thead><tr><th \
scope="col">Integration</th><th scope="col">Auth</th><th scope="col">Connects through</th><th scope="col" \
class="num">Your connections</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>\
<tbody>${body}</tbody></table>
${canConnect ? '' : html`<p class="note">Connecting needs the integrations:connect permission in this space.</p>`}`;
}

export default definePage({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/connections',
  context: 'space',
  scope: 'integrations:read',
  nav: { label: 'Connections', order: 50 },
  async handler(page) {
    const { org, space, scopes } = page.space!;
    const [rows, integrations] = await Promise.all([
      callerConnections(page.ctx)
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(MAX_ROWS) as Promise<ConnectionRow[]>,
      visibleIntegrations(page),
    ]);
    const names = new Map(integrations.map((i) => [i.id, i.displayName]));
    // The stream needs runs:read, which every preset role holds; without it the list is read on load only.
    const stream = `/api/realtime/runs?orgId=${org.id}&spaceId=${space.id}&channels=connection_update`;
    const live = scopes.has('runs:read')
      ? html` data-controller="stream-regions" data-stream="${stream}" data-events="connection_update" \
data-regions="connections-body" data-status="connections-live" data-announce="Your connections changed."`
      : '';
    sendConsolePage(page, {
      title: 'Connections',
      current: 'connections',
      body: html`<p class="lead">Your credentials for the integrations of ${space.name}: your runs use them, nobody \
else sees them, and the credentials themselves never show here.</p>
<section aria-labelledby="connections-heading"${live}>
<h2 id="connections-heading">Your connections</h2>
<div id="connections-body" data-live-region>${connectionsTable(page, rows, names)}${
        rows.length >= MAX_ROWS
          ? html`<p \
class="help">The newest ${MAX_ROWS} are shown; read the rest with <code>GET /api/connections</code>.</p>`
          : ''
      }</div>
</section>
<p class="visually-hidden" role="status" id="connections-live"></p>
<section aria-labelledby="integrations-heading">
<h2 id="integrations-heading">Integrations</h2>
${integrationsTable(page, integrations, rows)}
</section>`,
    });
  },
});
