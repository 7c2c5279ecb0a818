// GET the page of an interaction oidc-provider started: the sign-in (prompt `login`) or the
// consent (prompt `consent`).
import { accountClaims } from '../../../shared/oidc/accounts.ts';
import { defineRoute } from '../../route.ts';
import { csrfFor, currentInteraction, whereText } from './_interaction.ts';
import { consentPage, signInPage } from './pages.ts';
import { apiAudience } from '../../../shared/oidc/tokens.ts';
import { INTERACTION_PATH } from './_paths.ts';

const html = (description: string) => ({ description, contentType: 'text/html', schema: { type: 'string' } });

export default defineRoute<unknown, unknown, { uid: string }>({
  method: 'get',
  path: `${INTERACTION_PATH}/:uid`,
  operationId: 'oidcInteraction',
  summary: 'Sign-in or consent page of an authorization',
  description:
    'Opened by the browser during an authorization. Sign-in: email and password (for a space-level client with `allowSignup`, ' +
    'also a form to create an account). Consent: the permissions the application asks for, Allow or Deny. No script, strict CSP, ' +
    'CSRF value bound to the interaction.',
  tag: 'OIDC',
  auth: 'none',
  params: { type: 'object', properties: { uid: { type: 'string', maxLength: 128 } } },
  responses: { 200: html('The page'), 400: { ...html('The interaction expired or belongs to another browser'), problem: true } },
  async handler(ctx) {
    const interaction = await currentInteraction(ctx);
    if (!interaction) return;
    const { details, client } = interaction;
    const { knex } = ctx.services;
    const where = await whereText(knex, client);
    if (details.prompt.name === 'login') {
      return signInPage(ctx, 200, {
        uid: details.uid,
        csrf: csrfFor(ctx, details.uid),
        clientName: client.name,
        audience: client.level === 'space' ? `to use it ${where}` : `with your account, to act ${where}`,
        signup: client.level === 'space' && client.allow_signup,
      });
    }
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
    const scopes = [...new Set([...(missing.missingOIDCScope ?? []), ...(missing.missingResourceScopes?.[apiAudience(ctx.services.config.publicUrl)] ?? [])])];
    const who = details.session?.accountId ? await accountClaims(knex, details.session.accountId) : undefined;
    consentPage(ctx, {
      uid: details.uid,
      csrf: csrfFor(ctx, details.uid),
      clientName: client.name,
      who: who?.email ? `${who.name} (${who.email})` : (who?.name ?? 'you'),
      where,
      scopes,
      redirectOrigins: [...new Set(client.redirect_uris.map((u) => new URL(u).origin))],
    });
  },
});
