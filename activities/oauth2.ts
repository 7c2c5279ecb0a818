// The refreshConnection workflow's activities (DESIGN.md 7): when a connection's access token
// is due, and the refresh itself. Only ids, times and outcomes cross into the workflow; the
// tokens and the client secret stay sealed in Postgres. A refused refresh (the provider answers
// 4xx) marks the connection `needs_reconnection` and emits `connection_update`; an unreachable
// provider throws, so Temporal retries.
import { ApplicationFailure } from '@temporalio/activity';
import { integrationOf } from '../shared/integrations/auths.ts';
import { type ConnectionRow, openCredentials, sealCredentials } from '../shared/integrations/connections.ts';
import { notifyConnectionUpdate } from '../shared/integrations/connection-events.ts';
import { findOAuthClient, type OAuthCredential, refreshAt, TokenRefused, tokenRequest } from '../shared/integrations/oauth2.ts';
import { notifyConnectionNeedsReconnection } from '../shared/notifications/create.ts';
import type { PackageRow } from '../shared/packages/types.ts';
import type { RefreshConnectionInput } from '../temporal/contract/workflows.ts';
import type { ActivityDeps } from './deps.ts';

/** `wait`: refresh at `at` (epoch ms) the token that expires at `expiresAt`; `stop`: nothing to refresh. */
export type RefreshPlan = { action: 'stop'; reason: string } | { action: 'wait'; at: number; expiresAt: string };

export type RefreshOutcome = 'refreshed' | 'refused' | 'gone' | 'changed';

export function createOAuth2Activities(deps: Pick<ActivityDeps, 'knex' | 'config' | 'log'>) {
  const { knex, config, log } = deps;

  async function load(input: RefreshConnectionInput): Promise<(ConnectionRow & { expires_at: Date | null }) | undefined> {
    return knex('connections').where({ id: input.connectionId, org_id: input.orgId }).first();
  }

  return {
    async planConnectionRefresh(input: RefreshConnectionInput): Promise<RefreshPlan> {
      const row = await load(input);
      if (!row) return { action: 'stop', reason: 'gone' };
      if (row.needs_reconnection) return { action: 'stop', reason: 'needs_reconnection' };
      if (!row.expires_at) return { action: 'stop', reason: 'no expiry' };
      const credential = openCredentials(config.secretsKey, row) as unknown as OAuthCredential;
      if (!credential.refresh_token) return { action: 'stop', reason: 'no refresh token' };
      return { action: 'wait', at: refreshAt(row.expires_at, row.updated_at), expiresAt: row.expires_at.toISOString() };
    },

    /** Refreshes the token that expires at `expiresAt`; `changed` when the connection moved on meanwhile (a reconnect). */
    async refreshConnectionToken(input: RefreshConnectionInput & { expiresAt: string }): Promise<RefreshOutcome> {
      const row = await load(input);
      if (!row || row.needs_reconnection) return 'gone';
      if (row.expires_at?.toISOString() !== input.expiresAt) return 'changed';
      const slash = row.integration_package_id.indexOf('/');
      const pkg = (await knex('packages')
        .where({
          org_id: row.org_id,
          type: 'integration',
          scope: row.integration_package_id.slice(0, slash),
          name: row.integration_package_id.slice(slash + 1),
        })
        .first()) as PackageRow | undefined;
      const integration = pkg && (await integrationOf(knex, pkg));
      const auth = integration?.auths.find((a) => a.key === row.auth_key);
      const client = auth?.oauth2 && (await findOAuthClient(knex, config.secretsKey, row.org_id, row.integration_package_id, row.auth_key));
      const previous = openCredentials(config.secretsKey, row) as unknown as OAuthCredential;
      let refused: string | undefined;
      if (!auth?.oauth2 || !client) refused = 'the integration, its auth or its OAuth client is gone';
      else if (!previous.refresh_token) refused = 'no refresh token';
      if (!refused) {
        try {
          const { credential, scopes } = await tokenRequest(
            config,
            auth!,
            client!,
            { grant_type: 'refresh_token', refresh_token: previous.refresh_token! },
            previous,
          );
          const [updated] = await knex('connections')
            .where({ id: row.id, org_id: row.org_id, needs_reconnection: false })
            .where('expires_at', row.expires_at)
            .update({
              credentials_sealed: sealCredentials(config.secretsKey, credential as unknown as Record<string, unknown>),
              expires_at: credential.expires_at ? new Date(credential.expires_at) : null,
              ...(scopes ? { scopes } : {}),
              updated_at: knex.fn.now(),
            })
            .returning('*');
          if (!updated) return 'changed';
          await notifyConnectionUpdate(knex, updated);
          return 'refreshed';
        } catch (err) {
          if (!(err instanceof TokenRefused)) throw ApplicationFailure.retryable((err as Error).message, 'TokenUnavailable');
          refused = err.message;
        }
      }
      log.warn({ connectionId: row.id, reason: refused }, 'oauth2 refresh refused: connection needs reconnection');
      // Only the token this refresh held: a reconnection made meanwhile is not flagged.
      // The flag and the owner's connection.needs_reconnection notification commit together.
      const marked = await knex.transaction(async (trx) => {
        const [flagged] = (await trx('connections')
          .where({ id: row.id, org_id: row.org_id })
          .where('expires_at', row.expires_at)
          .update({ needs_reconnection: true, updated_at: knex.fn.now() })
          .returning('*')) as ConnectionRow[];
        if (flagged) await notifyConnectionNeedsReconnection(trx, flagged, `the token refresh was refused: ${refused}`);
        return flagged;
      });
      if (!marked) return 'changed';
      await notifyConnectionUpdate(knex, marked);
      return 'refused';
    },
  };
}
