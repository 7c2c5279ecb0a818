// The OAuth 2 callback (DESIGN.md 7): the provider sends the person back here with `code` and
// `state`. The state finds the hosted link (only its hash is stored); the code, the redirect URI
// and the PKCE verifier go sealed into a `connect_attempts` row, and the connectLogin workflow
// (carrying only the row's id) exchanges the code and stores the connection. A connection with a
// refresh token gets its refreshConnection workflow.
import { sha256Hex } from '../../../shared/crypto.ts';
import { notifyConnectionUpdate } from '../../../shared/integrations/connection-events.ts';
import type { ConnectionRow } from '../../../shared/integrations/connections.ts';
import { type ConnectLoginResult, runConnectAttempt } from '../../../shared/integrations/connect.ts';
import type { ConnectSessionRow } from '../../../shared/integrations/connect-sessions.ts';
import { type CodeExchangeFields, redirectUri } from '../../../shared/integrations/oauth2.ts';
import { decryptSecret } from '../../../shared/secrets.ts';
import { startRefreshConnectionWorkflow } from '../../../temporal/starters/refresh-connection.ts';
import { defineRoute } from '../../route.ts';
import { htmlPage } from './_shared.ts';
import { escapeHtml, sendLinkGone, sendMessage, sendPage, sendSuccess, sessionTarget, startedHere } from './_form.ts';

type SessionWithOAuth = ConnectSessionRow & { oauth_state_hash: string | null; oauth_verifier_sealed: string | null };

// The character sets of RFC 6749 Appendix A (printable ASCII; NQSCHAR without `"` and `\`): with
// them the largest query the schema allows fits the server's header limit (api/server.ts).
const VSCHAR = '^[\\x20-\\x7E]*$';
const NQSCHAR = '^[\\x20-\\x21\\x23-\\x5B\\x5D-\\x7E]*$';

export default defineRoute<unknown, { code?: string; state?: string; error?: string; error_description?: string }>({
  method: 'get',
  path: '/api/integrations/connect/callback',
  operationId: 'connectCallback',
  summary: 'OAuth 2 callback of the hosted connect link',
  description:
    "The provider's redirect back after the person decided (`code` and `state`, or `error`). The state names the hosted link " +
    "it came from; the code is exchanged at the auth's `token_url` by the `connectLogin` workflow (the code and PKCE verifier " +
    'never enter its history) and the connection stored with `{access_token, refresh_token, expires_at, token_type}` sealed and ' +
    'the granted scopes. ' +
    'Success is a 200 page and uses the link up; a refusal (`error`, or a failed exchange) is a page naming it and leaves the ' +
    'link usable until its ten minutes end; an unknown state is 410.',
  tag: 'Connections',
  auth: 'none',
  rateLimit: { points: 30, duration: 60, by: 'ip' },
  query: {
    type: 'object',
    properties: {
      code: { type: 'string', maxLength: 4096, pattern: VSCHAR },
      state: { type: 'string', maxLength: 512, pattern: VSCHAR },
      error: { type: 'string', maxLength: 200, pattern: NQSCHAR },
      error_description: { type: 'string', maxLength: 1000, pattern: NQSCHAR },
      iss: { type: 'string', maxLength: 1000, pattern: VSCHAR },
      scope: { type: 'string', maxLength: 4096, pattern: NQSCHAR },
      session_state: { type: 'string', maxLength: 1000, pattern: VSCHAR },
    },
  },
  responses: {
    200: htmlPage('Connected: the success page'),
    403: htmlPage('The person or the provider refused access', true),
    404: htmlPage("The link's integration or auth is no longer available", true),
    410: htmlPage('Unknown state, or the link expired or was used', true),
    502: htmlPage('The code exchange failed'),
  },
  async handler(ctx, { query }) {
    const { knex, config, workflows, log } = ctx.services;
    const state = query.state ?? '';
    const row = state
      ? ((await knex('connect_sessions')
          .where({ oauth_state_hash: sha256Hex(state) })
          .first()) as SessionWithOAuth | undefined)
      : undefined;
    if (!row || row.used_at || row.expires_at.getTime() <= Date.now()) return sendLinkGone(ctx);
    if (!startedHere(ctx, state)) {
      return sendMessage(ctx, 403, 'This sign-in did not start in this browser', [
        'For your safety a connection is only completed in the browser that opened the connect link.',
        'Open the link you were given again, in this browser.',
      ]);
    }
    const target = await sessionTarget(knex, row);
    if (target?.auth.connect !== 'oauth2')
      return sendMessage(ctx, 404, 'This integration is no longer available', ['Ask the application that sent you here for a new link.']);
    const { integration, auth } = target;
    if (query.error || !query.code) {
      const reason = query.error
        ? `${integration.displayName} answered: ${query.error}${query.error_description ? ` (${query.error_description})` : ''}.`
        : 'No authorization code came back.';
      return sendMessage(ctx, 403, 'Access was not granted', [reason, 'Open the link you were given again to retry.'], `Connect ${integration.displayName}`);
    }

    // Claimed for the attempt; given back if it fails (one connection per link).
    const claimedAt = new Date();
    const claimed = await knex('connect_sessions')
      .where({ token_hash: row.token_hash })
      .whereNull('used_at')
      .where('expires_at', '>', claimedAt)
      .update({ used_at: claimedAt, oauth_state_hash: null, oauth_verifier_sealed: null });
    if (!claimed) return sendLinkGone(ctx);

    const fields: CodeExchangeFields = {
      oauth2_code: query.code,
      redirect_uri: redirectUri(config.publicUrl),
      ...(row.oauth_verifier_sealed ? { code_verifier: decryptSecret(config.secretsKey, row.oauth_verifier_sealed) } : {}),
    };
    const attempt = {
      orgId: row.org_id,
      spaceId: row.space_id,
      owner: { type: row.owner_type, id: row.owner_id },
      integrationPackageRowId: integration.pkg.id,
      authKey: auth.key,
      connectionId: row.connection_id ?? undefined,
      scopes: row.scopes,
    };
    let result: ConnectLoginResult;
    try {
      result = await runConnectAttempt(ctx.services, fields, attempt);
    } catch (err) {
      log.error({ err, requestId: ctx.state.requestId }, 'oauth2 connect failed');
      result = { ok: false, detail: 'The connection could not be completed. Try again in a moment.' };
    }
    if (!result.ok) {
      await knex('connect_sessions').where({ token_hash: row.token_hash, used_at: claimedAt }).update({ used_at: null });
      return sendPage(
        ctx,
        502,
        `Connect ${integration.displayName}`,
        `<h1>${escapeHtml(integration.displayName)}</h1>\n<p class="alert" role="alert">${escapeHtml(`The connection \
could not be completed. ${result.detail}`)}</p>\n<p>Open ` + `the link you were given again to retry.</p>`,
      );
    }
    const connection = (await knex('connections').where({ id: result.connectionId, org_id: row.org_id }).first()) as ConnectionRow;
    try {
      await startRefreshConnectionWorkflow(workflows, { connectionId: connection.id, orgId: row.org_id });
    } catch (err) {
      log.error({ err, connectionId: connection.id }, 'refreshConnection did not start');
    }
    await notifyConnectionUpdate(knex, connection);
    sendSuccess(ctx, integration, connection.label);
  },
});
