import { ProblemError } from '../../../shared/errors.ts';
import { connect } from '../../../shared/integrations/connect.ts';
import { liveConnectSession } from '../../../shared/integrations/connect-sessions.ts';
import { notifyConnectionUpdate } from '../../../shared/integrations/connection-events.ts';
import { readForm } from '../../html/form.ts';
import { defineRoute } from '../../route.ts';
import { htmlPage } from './_shared.ts';
import { credentialsFromForm, csrfValid, fieldErrorsOf, sendForm, sendLinkGone, sendMessage, sendSuccess, sessionTarget } from './_form.ts';

export default defineRoute({
  method: 'post',
  path: '/api/integrations/connect/submit',
  operationId: 'submitConnect',
  summary: 'Submit the hosted connect form',
  description:
    'Posted by the hosted form (`application/x-www-form-urlencoded`: `token`, `csrf`, and `field.<name>` per credentials field; ' +
    "number, integer and boolean fields are converted to the schema's types, an empty text is left out). " +
    "A CSRF value that does not match the cookie is a 403 page. The connection is made as the link's creator, exactly as `connect/fields` " +
    'does; success is a 200 page naming the integration and the connection, and uses the link up. ' +
    'A validation failure re-shows the form with 400 and the reason next to each field; a sign-in the target refused re-shows ' +
    'it with 502 and the reason at the top; either way the link stays usable until its ten minutes end, then 410.',
  tag: 'Connections',
  auth: 'none',
  rateLimit: { points: 20, duration: 60, by: 'ip' },
  streamBody: {
    contentType: 'application/x-www-form-urlencoded',
    schema: {
      type: 'object',
      required: ['token', 'csrf'],
      properties: {
        token: { type: 'string', description: 'The link token' },
        csrf: { type: 'string', description: "The form's CSRF value" },
      },
      additionalProperties: { type: 'string', description: '`field.<name>`: a credentials field' },
    },
  },
  responses: {
    200: htmlPage('Connected: the success page'),
    400: htmlPage('The form again, with the fields to correct'),
    403: htmlPage('The CSRF check failed: open the link again', true),
    404: htmlPage("The link's integration or auth is no longer available", true),
    410: htmlPage('The link expired, was used, or is unknown', true),
    501: htmlPage('The auth connects through OAuth 2: it has no form to submit', true),
    502: htmlPage('The form again: the target refused the sign-in'),
  },
  async handler(ctx) {
    const { knex, log } = ctx.services;
    const form = await readForm(ctx);
    const token = form.get('token') ?? '';
    if (!token || !csrfValid(ctx, token, form.get('csrf') ?? undefined)) {
      return sendMessage(ctx, 403, 'This form could not be verified', [
        'The form was sent from another page, or your browser did not keep its security cookie.',
        'Open the link you were given again and submit the form from there.',
      ]);
    }
    const row = await liveConnectSession(knex, token);
    if (!row) return sendLinkGone(ctx);
    const target = await sessionTarget(knex, row);
    if (!target) return sendMessage(ctx, 404, 'This integration is no longer available', ['Ask the application that sent you here for a new link.']);
    const { integration, auth } = target;
    if (auth.connect === 'oauth2') {
      return sendMessage(ctx, 501, integration.displayName, ['This integration signs in through OAuth 2, which this page cannot complete yet.']);
    }

    // The link is claimed for the attempt (a second submit meanwhile finds it used) and given
    // back if the attempt fails, so exactly one connection can come out of it.
    const claimedAt = new Date();
    const claimed = await knex('connect_sessions')
      .where({ token_hash: row.token_hash })
      .whereNull('used_at')
      .where('expires_at', '>', claimedAt)
      .update({ used_at: claimedAt });
    if (!claimed) return sendLinkGone(ctx);

    const reshow = { ...target, token, csrf: form.get('csrf')!, values: form, reconnect: row.connection_id !== null };
    try {
      const { connection } = await connect(ctx.services, {
        orgId: row.org_id,
        spaceId: row.space_id,
        owner: { type: row.owner_type, id: row.owner_id },
        integration,
        auth,
        credentials: credentialsFromForm(auth, form),
        connectionId: row.connection_id ?? undefined,
        scopes: row.scopes,
      });
      // Made through a link, outside its owner's requests: the owner's open pages hear of it, as after the OAuth callback.
      await notifyConnectionUpdate(knex, connection).catch((err) => log.error({ err, requestId: ctx.state.requestId }, 'connection_update not sent'));
      sendSuccess(ctx, integration, connection.label);
    } catch (err) {
      await knex('connect_sessions').where({ token_hash: row.token_hash, used_at: claimedAt }).update({ used_at: null });
      if (!(err instanceof ProblemError)) {
        log.error({ err, requestId: ctx.state.requestId }, 'hosted connect failed');
        return sendForm(ctx, 500, { ...reshow, topError: 'The connection could not be completed. Try again in a moment.' });
      }
      if (err.code === 'validation_failed') {
        const { byField, other } = fieldErrorsOf(err.errors, auth);
        const top = other.length ? other.join(' ') : Object.keys(byField).length ? 'Check the fields marked below.' : err.detail;
        return sendForm(ctx, 400, { ...reshow, fieldErrors: byField, topError: top });
      }
      if (err.code === 'internal_error') {
        return sendForm(ctx, 502, { ...reshow, topError: `${integration.displayName} did not accept these details. ${err.detail}`.trim() });
      }
      return sendForm(ctx, err.status, { ...reshow, topError: err.detail });
    }
  },
});
