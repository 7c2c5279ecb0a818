// Connect or reconnect (`connection`) one auth of an integration, as POST
// /api/integrations/{scope}/{name}/auths/{authKey}/connect/session does (on its rate-limit
// counter): a hosted link for the person. The answer is a page leading to the link, not a
// redirect: the console's CSP `form-action 'self'` also governs where a form's redirects may go
// (Chromium enforces it), and an OAuth 2 link leads on to the provider.
import { findIntegration } from '../../../shared/integrations/auths.ts';
import { requestConnectLink } from '../../../shared/integrations/connect-sessions.ts';
import { problem } from '../../../shared/errors.ts';
import { DEFAULT_RATE_LIMITS } from '../../rate-limits.ts';
import { connectionOwner } from '../../resources/connections.ts';
import { formatTime } from '../format.ts';
import { html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage } from '../page.ts';
import { connectHow } from '../views/connections.ts';

const INTEGRATION = /^(@[a-z0-9][a-z0-9-]*)\/([a-z0-9][a-z0-9-]*)$/;

export default definePage({
  method: 'post',
  path: '/orgs/:orgId/spaces/:spaceId/connections/connect',
  context: 'space',
  scope: 'integrations:connect',
  rateLimit: { key: 'POST /api/integrations/:scope/:name/auths/:authKey/connect/session', rule: DEFAULT_RATE_LIMITS.write },
  async handler(page) {
    const { ctx } = page;
    const { org, space, base } = page.space!;
    const m = INTEGRATION.exec(page.form.get('integration') ?? '');
    const integration = m && (await findIntegration(ctx.services.knex, org.id, space.id, m[1], m[2]));
    if (!integration) throw problem('not_found', 'No such integration in this space');
    const authKey = page.form.get('auth') ?? '';
    const connectionId = page.form.get('connection') || undefined;
    const scopes = page.form.getAll('scope').filter(Boolean);
    const where = { orgId: org.id, spaceId: space.id, owner: connectionOwner(ctx) };
    const link = await requestConnectLink(ctx.services.knex, ctx.services.config.publicUrl, where, integration, authKey, {
      connectionId,
      scopes: scopes.length ? scopes : undefined,
    });
    const auth = integration.auths.find((a) => a.key === authKey)!;
    const verb = connectionId ? 'Reconnect' : 'Connect';
    sendConsolePage(page, {
      title: `${verb} ${integration.displayName}`,
      current: 'connections',
      crumbs: [{ label: 'Connections', href: `${base}/connections` }, { label: `${verb} ${integration.displayName}` }],
      body: html`<p class="lead">Your link is ready. It opens ${connectHow(auth)} where you \
give ${integration.displayName} your details; they go to the service, never to this console.</p>
<p><a class="button" id="connect-link" href="${link.connect_url}" rel="noopener noreferrer">Continue to ${integration.displayName}</a></p>
<p class="help">The link works once, until <time \
datetime="${link.expiresAt}">${formatTime(link.expiresAt)}</time>.${
        connectionId
          ? html` It refreshes \
<code>${connectionId}</code> in place, so runs and schedules that use it keep it.`
          : ''
      } Your connections page shows \
the result.</p>
<p><a href="${base}/connections">Back to your connections</a></p>`,
    });
  },
});
