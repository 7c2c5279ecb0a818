// The side of a connect attempt that touches secrets (DESIGN.md 7): opens the sealed fields of
// the `connect_attempts` row, deletes the row (the fields are used once), sends the login when
// the auth declares one, and stores the connection: new, or the named one refreshed in place.
// Only an outcome leaves this activity; it is not retried (a login is not sent twice).
import { integrationOf } from '../shared/integrations/auths.ts';
import type { ConnectLoginInput, ConnectLoginResult } from '../shared/integrations/connect.ts';
import { sealCredentials } from '../shared/integrations/connections.ts';
import { LoginRefused, performLogin } from '../shared/integrations/login.ts';
import { newId } from '../shared/ids.ts';
import type { PackageRow } from '../shared/packages/types.ts';
import { decryptSecret } from '../shared/secrets.ts';
import type { ActivityDeps } from './deps.ts';

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
      if (auth.connect === 'login') {
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
          .update({ credentials_sealed: sealed, needs_reconnection: false, scopes: input.scopes.length ? input.scopes : knex.raw('scopes'), updated_at: knex.fn.now() });
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
        scopes: input.scopes,
        credentials_sealed: sealed,
      });
      return { ok: true, connectionId: id, created: true };
    },
  };
}
