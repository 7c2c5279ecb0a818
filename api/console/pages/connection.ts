// One of the person's connections (what GET /api/connections/{id} shows them; anyone else's is
// the 404 page): its status, live as on the list, what it was granted, reconnect and delete.
import { findIntegration } from '../../../shared/integrations/auths.ts';
import { findCallerConnection } from '../../resources/connections.ts';
import { formatTime } from '../format.ts';
import { actionButton } from '../forms.ts';
import { html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage } from '../page.ts';
import { connectButton, connectionBadge } from '../views/connections.ts';

export default definePage<{ connectionId: string }>({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/connections/:connectionId',
  context: 'space',
  scope: 'integrations:read',
  async handler(page) {
    const { ctx } = page;
    const { org, space, scopes, base } = page.space!;
    const c = await findCallerConnection(ctx, page.params.connectionId);
    const [scope, name] = c.integration_package_id.split('/');
    const integration = await findIntegration(ctx.services.knex, org.id, space.id, scope, name);
    const displayName = integration?.displayName ?? c.integration_package_id;
    const reconnect =
      integration && scopes.has('integrations:connect')
        ? connectButton(page, { integration, authKey: c.auth_key, connectionId: c.id, className: c.needs_reconnection ? '' : 'secondary' })
        : '';
    const remove = scopes.has('integrations:disconnect')
      ? actionButton(page, { action: `${base}/connections/${c.id}/delete`, label: 'Delete connection', className: 'danger', describedBy: 'delete-help' })
      : '';
    const stream = `/api/realtime/runs?orgId=${org.id}&spaceId=${space.id}&channels=connection_update`;
    const live = scopes.has('runs:read')
      ? html` data-controller="stream-regions" data-stream="${stream}" data-events="connection_update" data-regions="connection-summary"`
      : '';
    sendConsolePage(page, {
      title: `${c.label} · ${displayName}`,
      current: 'connections',
      crumbs: [{ label: 'Connections', href: `${base}/connections` }, { label: c.label }],
      heading: html`<h1>${c.label} <span class="muted">${displayName}</span></h1>`,
      body: html`<div${live}>
<section id="connection-summary" class="run-summary" aria-label="Connection" data-live-region>
<dl class="facts">
<div><dt>Status</dt><dd>${connectionBadge(c)}</dd></div>
<div><dt>Id</dt><dd><code>${c.id}</code></dd></div>
<div><dt>Integration</dt><dd>${c.integration_package_id}</dd></div>
<div><dt>Auth</dt><dd><code>${c.auth_key}</code></dd></div>
<div><dt>Account</dt><dd>${c.account_id}</dd></div>
<div><dt>Scopes</dt><dd>${c.scopes.length ? c.scopes.join(', ') : '—'}</dd></div>
<div><dt>Granted by version</dt><dd>${c.integration_version ?? 'the draft'}</dd></div>
<div><dt>Created</dt><dd><time datetime="${c.created_at.toISOString()}">${formatTime(c.created_at)}</time></dd></div>
<div><dt>Updated</dt><dd><time datetime="${c.updated_at.toISOString()}">${formatTime(c.updated_at)}</time></dd></div>
</dl>
${
  c.needs_reconnection
    ? html`<div class="alert" role="note"><strong>This connection stopped working.\
</strong> ${displayName} refused it; runs that need it are refused until you reconnect.</div>`
    : ''
}
</section>
</div>
<h2>Where its credential may go</h2>
${
  c.authorized_uris?.length
    ? html`<ul class="plain">${c.authorized_uris.map(
        (u) => html`<li><code>${u}</code>\
</li>`,
      )}</ul>`
    : html`<p class="note">Nowhere: reconnect to grant what the integration asks for now.</p>`
}
<div class="run-actions start">${reconnect}${remove}</div>
${
  remove
    ? html`<p class="help" id="delete-help">Deleting removes the stored credential. Schedules you created in this \
space whose agent needs ${c.integration_package_id}, and which have no other usable connection, are disabled with the \
reason.</p>`
    : ''
}`,
    });
  },
});
