// Connections (SPEC 2.7, DESIGN.md 7): one actor's credential for one auth of an integration,
// in one space. The credential is sealed with SECRETS_KEY and never leaves this module except
// to the code that delivers it; the wire shape carries no secret.
import type { Knex } from 'knex';
import { decryptSecret, encryptSecret } from '../secrets.ts';
import type { Integration, IntegrationAuth } from './auths.ts';
import { dateTime } from '../json-schema.ts';

/** Who owns a connection: a person, or the end-user a key acts for (Service-User). */
export interface ConnectionOwner {
  type: 'user' | 'end_user';
  id: string;
}

export interface ConnectionRow {
  id: string;
  org_id: string;
  space_id: string;
  integration_package_id: string;
  auth_key: string;
  owner_type: ConnectionOwner['type'];
  owner_id: string;
  account_id: string;
  label: string;
  needs_reconnection: boolean;
  scopes: string[];
  credentials_sealed: string;
  /** The integration version in force when the connection was made or last reconnected; null: the draft. */
  integration_version: string | null;
  /** Its auth's authorized_uris then: the credential goes nowhere else (null: nowhere). */
  authorized_uris: string[] | null;
  created_at: Date;
  updated_at: Date;
}

export function connectionDto(row: ConnectionRow) {
  return {
    object: 'connection' as const,
    id: row.id,
    integration_package_id: row.integration_package_id,
    auth_key: row.auth_key,
    account_id: row.account_id,
    label: row.label,
    needs_reconnection: row.needs_reconnection,
    scopes: row.scopes,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The wire shape of `connectionDto`, published on every route that answers a connection. */
export const connectionSchema = {
  type: 'object',
  required: ['object', 'id', 'integration_package_id', 'auth_key', 'account_id', 'label', 'needs_reconnection', 'scopes', 'createdAt', 'updatedAt'],
  properties: {
    object: { const: 'connection' },
    id: { type: 'string', pattern: '^conn_' },
    integration_package_id: { type: 'string', description: "The integration, '@scope/name'" },
    auth_key: { type: 'string' },
    account_id: { type: 'string', description: '`default` when the login carries no identity' },
    label: { type: 'string' },
    needs_reconnection: { type: 'boolean', description: 'The credential stopped working; connect again with `connection_id` to refresh it in place' },
    scopes: { type: 'array', items: { type: 'string' } },
    createdAt: dateTime,
    updatedAt: dateTime,
  },
};

/** The owner's connections in one space (every read filters on organization, space and owner). */
export function ownedConnections(knex: Knex, where: { orgId: string; spaceId: string; owner: ConnectionOwner }): Knex.QueryBuilder {
  return knex('connections').where({ org_id: where.orgId, space_id: where.spaceId, owner_type: where.owner.type, owner_id: where.owner.id });
}

export function sealCredentials(key: Buffer | undefined, credentials: Record<string, unknown>): string {
  return encryptSecret(key, JSON.stringify(credentials));
}

export function openCredentials(key: Buffer | undefined, row: Pick<ConnectionRow, 'credentials_sealed'>): Record<string, string> {
  return JSON.parse(decryptSecret(key, row.credentials_sealed)) as Record<string, string>;
}

/**
 * The columns that pin a connection to what it was granted (DESIGN.md 5, issue 28): the version
 * in force as it is made or reconnected, and its auth's authorized_uris. A later version that
 * reaches further (or a draft edited since) does not take the credential along: the owner
 * reconnects to grant it.
 */
export function grantColumns(integration: Pick<Integration, 'version'>, auth: Pick<IntegrationAuth, 'authorizedUris'>) {
  return { integration_version: integration.version, authorized_uris: JSON.stringify(auth.authorizedUris) };
}

/** Where the connection's credential may go, as granted; a connection without a grant goes nowhere. */
export function grantedUris(row: Pick<ConnectionRow, 'authorized_uris'>): string[] {
  return row.authorized_uris ?? [];
}
