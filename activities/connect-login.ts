// The side of a connect attempt that touches secrets (DESIGN.md 7): opens the sealed fields of
// the `connect_attempts` row, deletes the row (the fields are used once), sends the login when
// the auth declares one, and stores the connection: new, or the named one refreshed in place.
// Only an outcome leaves this activity; it is not retried (a login is not sent twice).
import { integrationOf } from '../shared/integrations/auths.ts';
import type { ConnectLoginInput, ConnectLoginResult } from '../temporal/contract/workflows.ts';
import { grantColumns, sealCredentials } from '../shared/integrations/connections.ts';
import { LoginRefused, performLogin } from '../shared/integrations/login.ts';
import { newId } from '../shared/ids.ts';
import type { PackageRow } from '../shared/packages/types.ts';
import { decryptSecret } from '../shared/secrets.ts';
import type { ActivityDeps } from './deps.ts';
import type { Knex } from 'knex';
import type { IntegrationAuth } from '../shared/integrations/auths.ts';
import {
  type CodeExchangeFields,
  findOAuthClient,
  type OAuthCredential,
  TokenRefused,
  TokenUnavailable,
  requestedScopes,
  tokenRequest,
} from '../shared/integrations/oauth2.ts';

/** The OAuth 2 path: the code (and PKCE verifier) for tokens; the granted scopes, else the requested ones. */
async function exchangeCode(
  config: ActivityDeps['config'],
  knex: Knex,
  integrationId: string,
  orgId: string,
  auth: IntegrationAuth,
  fields: CodeExchangeFields,
): Promise<{ ok: true; credential: OAuthCredential; scopes?: string[] } | { ok: false; detail: string }> {
  const client = auth.oauth2 && (await findOAuthClient(knex, config.secretsKey, orgId, integrationId, auth.key));
  if (!auth.oauth2 || !client) return { ok: false, detail: 'The OAuth client of this auth is not configured' };
  const grant: Record<string, string> = { grant_type: 'authorization_code', code: fields.oauth2_code, redirect_uri: fields.redirect_uri };
  if (fields.code_verifier) grant.code_verifier = fields.code_verifier;
  try {
    const { credential, scopes } = await tokenRequest(config, auth, client, grant);
    return { ok: true, credential, scopes };
  } catch (err) {
    if (err instanceof TokenRefused || err instanceof TokenUnavailable) return { ok: false, detail: err.message };
    throw err;
  }
}

export function createConnectLoginActivity(deps: Pick<ActivityDeps, 'knex' | 'config'>) {
  const { knex, config } = deps;
  return {
    async performConnectLogin(input: ConnectLoginInput): Promise<ConnectLoginResult> {
      const attempt = await knex('connect_attempts').where({ id: input.attemptId, org_id: input.orgId }).first();
      if (!attempt || attempt.expires_at.getTime() <= Date.now()) return { ok: false, detail: 'The connect attempt expired; submit the fields again' };
      await knex('connect_attempts').where({ id: attempt.id }).delete();
      const fields = JSON.parse(decryptSecret(config.secretsKey, attempt.fields_sealed)) as Record<string, unknown>;

      const pkg = (await knex('packages').where({ id: input.integrationPackageRowId, org_id: input.orgId }).first()) as PackageRow | undefined;
      const integration = pkg && (await integrationOf(knex, pkg));
      const auth = integration?.auths.find((a) => a.key === input.authKey);
      if (!integration || !auth) return { ok: false, detail: 'The integration or its auth no longer exists' };

      let credential: Record<string, unknown> = fields;
      let scopes = input.scopes;
      let expiresAt: Date | null = null;
      if (auth.connect === 'oauth2') {
        // The authorization code from the callback: exchanged once at the token endpoint.
        const exchanged = await exchangeCode(config, knex, integration.id, input.orgId, auth, fields as unknown as CodeExchangeFields);
        if (!exchanged.ok) return exchanged;
        credential = exchanged.credential as unknown as Record<string, unknown>;
        scopes = exchanged.scopes ?? requestedScopes(auth.oauth2!, input.scopes);
        expiresAt = exchanged.credential.expires_at ? new Date(exchanged.credential.expires_at) : null;
      } else if (auth.connect === 'login') {
        try {
          credential = await performLogin(config, auth, fields);
        } catch (err) {
          if (err instanceof LoginRefused) return { ok: false, detail: err.message };
          throw err;
        }
      }
      // The API stops waiting at the attempt's expiry: a login answered later stores nothing.
      if (attempt.expires_at.getTime() <= Date.now()) return { ok: false, detail: 'The login took longer than the connect attempt allows' };
      const sealed = sealCredentials(config.secretsKey, credential);
      if (input.connectionId) {
        const updated = await knex('connections')
          .where({ id: input.connectionId, org_id: input.orgId, space_id: input.spaceId, owner_type: input.owner.type, owner_id: input.owner.id })
          .update({
            credentials_sealed: sealed,
            // A reconnect grants what the version now in force allows (DESIGN.md 5).
            ...grantColumns(integration, auth),
            needs_reconnection: false,
            scopes: scopes.length ? scopes : knex.raw('scopes'),
            ...(auth.connect === 'oauth2' ? { expires_at: expiresAt } : {}),
            updated_at: knex.fn.now(),
          });
        if (!updated) return { ok: false, detail: 'The connection to refresh no longer exists' };
        return { ok: true, connectionId: input.connectionId, created: false };
      }
      const id = newId('conn');
      await knex('connections').insert({
        id,
        org_id: input.orgId,
        space_id: input.spaceId,
        integration_package_id: integration.id,
        auth_key: auth.key,
        owner_type: input.owner.type,
        owner_id: input.owner.id,
        // The login carries no identity today: the generic account and label (SPEC 2.7).
        account_id: 'default',
        label: `${integration.displayName} account`,
        scopes,
        credentials_sealed: sealed,
        ...grantColumns(integration, auth),
        ...(auth.connect === 'oauth2' ? { expires_at: expiresAt } : {}),
      });
      return { ok: true, connectionId: id, created: true };
    },
  };
}
