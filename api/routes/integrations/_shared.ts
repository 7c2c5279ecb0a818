// What the integration routes share: path parameters and the integration lookup (404 when the
// space cannot see it, the package visibility rule).
import { findIntegration, type Integration } from '../../../shared/integrations/auths.ts';
import { problem } from '../../../shared/errors.ts';
import type { AppContext } from '../../context.ts';
import type { ResponseDef } from '../../route.ts';
import { nameParam, scopeParam } from '../../resources/packages.ts';

/**
 * A response of the hosted connect pages: an HTML page. A message page (`sendMessage`) is
 * `negotiated`: a client that does not ask for HTML gets the same refusal as a problem document.
 */
export function htmlPage(description: string, negotiated = false): ResponseDef {
  return { description, contentType: 'text/html', schema: { type: 'string' }, ...(negotiated ? { problem: true } : {}) };
}

export const authKeyParam = { type: 'string', minLength: 1, maxLength: 100, description: 'Key of the auth in the manifest `auths` map' } as const;

export const integrationAuthParams = {
  type: 'object',
  required: ['scope', 'name', 'authKey'],
  properties: { scope: scopeParam, name: nameParam, authKey: authKeyParam },
} as const;

export async function visibleIntegration(ctx: AppContext, scope: string, name: string): Promise<Integration> {
  const { org, space } = ctx.state.tenancy!;
  const integration = await findIntegration(ctx.services.knex, org!.id, space!.id, scope, name);
  if (!integration) throw problem('not_found', `No integration ${scope}/${name} in this space`);
  return integration;
}
