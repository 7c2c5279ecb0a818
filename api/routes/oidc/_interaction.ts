// What the sign-in and consent routes share: the interaction oidc-provider is waiting on, its
// client, and the CSRF value bound to it.
import type { Knex } from 'knex';
import type Provider from 'oidc-provider';
import { findClientRow, type OAuthClientRow } from '../../../shared/oidc/clients.ts';
import { type CsrfScope, csrfValid, issueCsrf } from '../../html/csrf.ts';
import type { AppContext } from '../../context.ts';
import { messagePage } from './pages.ts';
import { INTERACTION_PATH } from './_paths.ts';
import { oidcServer } from './provider.ts';

const CSRF: CsrfScope = { cookie: 'svc.oidc_csrf', path: INTERACTION_PATH, purpose: 'oidc-interaction-csrf' };

export type InteractionDetails = Awaited<ReturnType<Provider['interactionDetails']>>;

export interface Interaction {
  provider: Provider;
  details: InteractionDetails;
  client: OAuthClientRow;
}

/**
 * The interaction this browser is in, or undefined after answering with a page: an unknown or
 * expired interaction, or one started in another browser (oidc-provider's interaction cookie).
 */
export async function currentInteraction(ctx: AppContext): Promise<Interaction | undefined> {
  const { provider } = await oidcServer(ctx.services);
  let details: InteractionDetails;
  try {
    details = await provider.interactionDetails(ctx.req, ctx.res);
  } catch {
    messagePage(ctx, 400, 'This sign-in has expired', 'It took too long, or was started in another browser. Go back to the application and start again.');
    return undefined;
  }
  if (details.uid !== ctx.params.uid) {
    messagePage(ctx, 400, 'This sign-in has expired', 'Go back to the application and start again.');
    return undefined;
  }
  const client = await findClientRow(ctx.services.knex as Knex, String(details.params.client_id));
  if (!client) {
    messagePage(ctx, 400, 'This application is no longer registered', 'Its owner removed it. Go back to the application.');
    return undefined;
  }
  return { provider, details, client };
}

export function csrfFor(ctx: AppContext, uid: string): string {
  return issueCsrf(ctx, CSRF, uid);
}

export function csrfMatches(ctx: AppContext, uid: string, submitted: string | null): boolean {
  return csrfValid(ctx, CSRF, uid, submitted ?? undefined);
}

/** Hands the result to oidc-provider, which redirects the browser onwards (303). */
export async function finish(ctx: AppContext, interaction: Interaction, result: Record<string, unknown>, merge: boolean): Promise<void> {
  ctx.respond = false;
  await interaction.provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: merge });
}

/** Where a token of this client acts, in words, for the pages. */
export async function whereText(knex: Knex, client: OAuthClientRow): Promise<string> {
  if (client.level === 'instance') return 'wherever you have access';
  const org = await knex('organizations').where({ id: client.org_id }).first('name');
  if (client.level === 'org') return `in the organization ${org?.name ?? ''}`.trim();
  const space = await knex('spaces').where({ id: client.space_id }).first('name');
  return `in ${space?.name ?? 'its space'} (${org?.name ?? ''})`;
}
