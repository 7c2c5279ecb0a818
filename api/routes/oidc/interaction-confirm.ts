// POST the consent page: Allow records the grant (the OpenID scopes and the API permissions the
// client asked for); Deny sends the browser back to the client with `access_denied`.
import { readForm } from '../../html/form.ts';
import { defineRoute } from '../../route.ts';
import { csrfMatches, currentInteraction, finish } from './_interaction.ts';
import { messagePage } from './pages.ts';
import { INTERACTION_PATH } from './_paths.ts';

const html = (description: string) => ({ description, contentType: 'text/html', schema: { type: 'string' } });

export default defineRoute<unknown, unknown, { uid: string }>({
  method: 'post',
  path: `${INTERACTION_PATH}/:uid/confirm`,
  operationId: 'oidcInteractionConfirm',
  summary: 'Submit the consent page',
  description: 'Form fields `csrf` and `decision` (`allow` or `deny`). Redirects (303) back to the application.',
  tag: 'OIDC',
  auth: 'none',
  params: { type: 'object', properties: { uid: { type: 'string', maxLength: 128 } } },
  streamBody: {
    contentType: 'application/x-www-form-urlencoded',
    schema: { type: 'object', required: ['csrf', 'decision'], properties: { csrf: { type: 'string' }, decision: { enum: ['allow', 'deny'] } } },
  },
  responses: {
    303: { description: 'Back to the application' },
    400: { ...html('The interaction expired'), problem: true },
    403: html('The CSRF value is wrong'),
  },
  async handler(ctx) {
    const form = await readForm(ctx);
    const interaction = await currentInteraction(ctx);
    if (!interaction) return;
    const { details, provider } = interaction;
    if (!csrfMatches(ctx, details.uid, form.get('csrf'))) {
      return messagePage(ctx, 403, 'This form has expired', 'Reload the page and try again.');
    }
    if (details.prompt.name !== 'consent' || !details.session?.accountId) return messagePage(ctx, 400, 'Nothing to confirm', 'Go back to the application.');
    if (form.get('decision') !== 'allow') {
      return finish(ctx, interaction, { error: 'access_denied', error_description: 'The person did not allow the application' }, false);
    }
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: String(details.params.client_id) });
    if (!grant) return messagePage(ctx, 400, 'This sign-in has expired', 'Go back to the application and start again.');
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(resource, scopes.join(' '));
    const grantId = await grant.save();
    await finish(ctx, interaction, { consent: details.grantId ? {} : { grantId } }, true);
  },
});
