import { sha256Hex } from '../../../shared/crypto.ts';
import type { Integration, IntegrationAuth } from '../../../shared/integrations/auths.ts';
import { type ConnectSessionRow, liveConnectSession } from '../../../shared/integrations/connect-sessions.ts';
import { authorizationRequest, findOAuthClient, redirectUri, requestedScopes } from '../../../shared/integrations/oauth2.ts';
import { encryptSecret } from '../../../shared/secrets.ts';
import type { AppContext } from '../../context.ts';
import { defineRoute } from '../../route.ts';
import { htmlPage } from './_shared.ts';
import { CONTENT_SECURITY_POLICY, issueCsrf, sendForm, sendLinkGone, sendMessage, sessionTarget, setOAuthStateCookie } from './_form.ts';

/**
 * An OAuth 2 auth: 302 to the provider's authorization_url. Each visit draws a new `state`
 * (stored hashed with the link, so only the latest redirect can finish) and PKCE verifier
 * (stored sealed); the callback finds the link by the state.
 */
async function redirectToProvider(
  ctx: AppContext,
  token: string,
  row: ConnectSessionRow,
  target: { integration: Integration; auth: IntegrationAuth },
): Promise<void> {
  const { knex, config } = ctx.services;
  const settings = target.auth.oauth2;
  const client = settings && (await findOAuthClient(knex, config.secretsKey, row.org_id, row.integration_package_id, target.auth.key));
  if (!settings || !client) {
    return sendMessage(
      ctx,
      501,
      target.integration.displayName,
      ['This integration signs in through OAuth 2, and its OAuth client has not been set up yet.', 'Ask the application that sent you here to configure it.'],
      `Connect ${target.integration.displayName}`,
    );
  }
  const req = authorizationRequest(settings, client.clientId, redirectUri(config.publicUrl), requestedScopes(settings, row.scopes));
  await knex('connect_sessions')
    .where({ token_hash: sha256Hex(token) })
    .update({ oauth_state_hash: sha256Hex(req.state), oauth_verifier_sealed: req.verifier ? encryptSecret(config.secretsKey, req.verifier) : null });
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  setOAuthStateCookie(ctx, req.state);
  ctx.redirect(req.url);
}

export default defineRoute<unknown, { token?: string }>({
  method: 'get',
  path: '/api/integrations/connect/start',
  operationId: 'startConnect',
  summary: 'Hosted connect form (the page a connect link opens)',
  description:
    "Opened in a browser from a `connect_url`. Renders a form generated from the auth's `credentials.schema` (titles as labels, " +
    'descriptions as help, password inputs for `writeOnly`, `format: password` and names containing `password`), posting to `POST ' +
    '/api/integrations/connect/submit`. ' +
    `No script; \`Content-Security-Policy: ${CONTENT_SECURITY_POLICY.replace(/sha256-[^']+/, 'sha256-…')}\`, \`nosniff\`, \`no-referrer\`, ` +
    `\`no-store\`; a CSRF value in the form and an HttpOnly SameSite=Strict cookie. ` +
    'An unknown, expired or used link is a 410 page asking for a new one. An OAuth 2 auth redirects (302) to the provider instead; ' +
    'the provider sends the person back to `GET /api/integrations/connect/callback`.',
  tag: 'Connections',
  auth: 'none',
  rateLimit: { points: 60, duration: 60, by: 'ip' },
  query: {
    type: 'object',
    properties: { token: { type: 'string', maxLength: 512, description: 'The link token from `connect_url`' } },
  },
  responses: {
    200: htmlPage('The form'),
    404: htmlPage("The link's integration or auth is no longer available", true),
    410: htmlPage('The link expired, was used, or is unknown', true),
    302: {
      description:
        "An OAuth 2 auth: the provider's authorization_url (response_type=code, client_id, redirect_uri `{PUBLIC_URL}/api/integrations/connect/callback`, " +
        'scope, state, PKCE S256 unless `pkce: false`)',
    },
    501: htmlPage('The auth connects through OAuth 2 and the organization has not stored its client (`PUT .../oauth-client`)', true),
  },
  async handler(ctx, { query }) {
    const token = query.token ?? '';
    const row = token ? await liveConnectSession(ctx.services.knex, token) : undefined;
    if (!row) return sendLinkGone(ctx);
    const target = await sessionTarget(ctx.services.knex, row);
    if (!target) {
      return sendMessage(ctx, 404, 'This integration is no longer available', ['Ask the application that sent you here for a new link.']);
    }
    if (target.auth.connect === 'oauth2') return redirectToProvider(ctx, token, row, target);
    sendForm(ctx, 200, { ...target, token, csrf: issueCsrf(ctx, token), reconnect: row.connection_id !== null });
  },
});
