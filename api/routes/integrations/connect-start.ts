import { liveConnectSession } from '../../../shared/integrations/connect-sessions.ts';
import { defineRoute } from '../../route.ts';
import { CONTENT_SECURITY_POLICY, issueCsrf, sendForm, sendLinkGone, sendMessage, sessionTarget } from './_form.ts';

const html = (description: string) => ({ description, contentType: 'text/html', schema: { type: 'string' } });

export default defineRoute<unknown, { token?: string }>({
  method: 'get',
  path: '/api/integrations/connect/start',
  operationId: 'startConnect',
  summary: 'Hosted connect form (the page a connect link opens)',
  description:
    "Opened in a browser from a `connect_url`. Renders a form generated from the auth's `credentials.schema` (titles as labels, descriptions as help, password inputs for `writeOnly`, `format: password` and names containing `password`), posting to `POST /api/integrations/connect/submit`. " +
    `No script; \`Content-Security-Policy: ${CONTENT_SECURITY_POLICY.replace(/sha256-[^']+/, 'sha256-…')}\`, \`nosniff\`, \`no-referrer\`, \`no-store\`; a CSRF value in the form and an HttpOnly SameSite=Strict cookie. ` +
    'An unknown, expired or used link is a 410 page asking for a new one.',
  tag: 'Connections',
  auth: 'none',
  rateLimit: { points: 60, duration: 60, by: 'ip' },
  query: {
    type: 'object',
    properties: { token: { type: 'string', maxLength: 512, description: 'The link token from `connect_url`' } },
  },
  responses: {
    200: html('The form'),
    404: html("The link's integration or auth is no longer available"),
    410: html('The link expired, was used, or is unknown'),
    501: html('The auth connects through OAuth 2, which the hosted form does not handle yet'),
  },
  async handler(ctx, { query }) {
    const token = query.token ?? '';
    const row = token ? await liveConnectSession(ctx.services.knex, token) : undefined;
    if (!row) return sendLinkGone(ctx);
    const target = await sessionTarget(ctx.services.knex, row);
    if (!target) {
      return sendMessage(ctx, 404, 'This integration is no longer available', ['Ask the application that sent you here for a new link.']);
    }
    if (target.auth.connect === 'oauth2') {
      return sendMessage(ctx, 501, target.integration.displayName, ['This integration signs in through OAuth 2, which this page cannot complete yet.'], `Connect ${target.integration.displayName}`);
    }
    sendForm(ctx, 200, { ...target, token, csrf: issueCsrf(ctx, token), reconnect: row.connection_id !== null });
  },
});
