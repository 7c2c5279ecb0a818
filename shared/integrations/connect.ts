// One connect attempt, from the API's side (DESIGN.md 7): the submitted fields are checked
// against the auth's `credentials.schema`, sealed into a short-lived `connect_attempts` row, and
// a `connectLogin` workflow (`connect:<cat id>`, queue `platform`) carries only that row's id;
// its activity sends the login (if any), stores the connection and deletes the row. The API
// awaits the workflow, at most 30 s. Fields never enter Temporal history or the logs.
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import { problem } from '../errors.ts';
import { newId } from '../ids.ts';
import { encryptSecret } from '../secrets.ts';
import { runInput } from '../validation.ts';
import type { ConnectLoginInput, ConnectLoginResult } from '../../temporal/contract/workflows.ts';
import { executeConnectLoginWorkflow } from '../../temporal/starters/connect-login.ts';
import type { Integration, IntegrationAuth } from './auths.ts';
import { type ConnectionOwner, type ConnectionRow, ownedConnections } from './connections.ts';

export const CONNECT_TIMEOUT_MS = 30_000;

// The attempt's outcome is the workflow's (temporal/contract/workflows.ts); callers read it from here.
export type { ConnectLoginResult };

export interface ConnectRequest {
  orgId: string;
  spaceId: string;
  owner: ConnectionOwner;
  integration: Integration;
  auth: IntegrationAuth;
  credentials: unknown;
  connectionId?: string;
  scopes?: string[];
}

/**
 * Seals `fields` into a `connect_attempts` row and runs the `connectLogin` workflow on its id,
 * awaiting the outcome (at most CONNECT_TIMEOUT_MS). The row is deleted whatever happens (the
 * activity deletes it first; this covers a workflow that never ran).
 */
export async function runConnectAttempt(
  deps: { knex: Knex; workflows: Client; config: Pick<Config, 'secretsKey'> },
  fields: object,
  attempt: Omit<ConnectLoginInput, 'attemptId'>,
): Promise<ConnectLoginResult> {
  const { knex, workflows, config } = deps;
  const attemptId = newId('cat');
  await knex('connect_attempts').insert({
    id: attemptId,
    org_id: attempt.orgId,
    fields_sealed: encryptSecret(config.secretsKey, JSON.stringify(fields)),
    expires_at: new Date(Date.now() + CONNECT_TIMEOUT_MS),
  });
  try {
    return await executeConnectLoginWorkflow(workflows, { ...attempt, attemptId }, CONNECT_TIMEOUT_MS);
  } finally {
    await knex('connect_attempts').where({ id: attemptId }).delete();
  }
}

/** The auth `key` of the integration, or 404. */
export function authOf(integration: Integration, key: string): IntegrationAuth {
  const auth = integration.auths.find((a) => a.key === key);
  if (!auth) throw problem('not_found', `${integration.id} has no auth "${key}"`);
  return auth;
}

/**
 * Runs one connect attempt and returns the stored connection (`created` false when
 * `connectionId` was refreshed in place). A refused login is 500 `internal_error` naming why.
 */
export async function connect(
  deps: { knex: Knex; workflows: Client; config: Pick<Config, 'secretsKey'> },
  req: ConnectRequest,
): Promise<{ connection: ConnectionRow; created: boolean }> {
  const { knex } = deps;
  if (req.auth.connect === 'oauth2') {
    throw problem('invalid_request', { detail: `The auth "${req.auth.key}" connects through OAuth 2: use the hosted connect link`, param: 'auth_key' });
  }
  if (typeof req.credentials !== 'object' || req.credentials === null || Array.isArray(req.credentials)) {
    throw problem('validation_failed', {
      detail: 'credentials must be an object',
      errors: [{ field: 'credentials', code: 'invalid_type', message: 'credentials must be an object' }],
    });
  }
  const fields = runInput(req.auth.credentialsSchema, req.credentials as Record<string, unknown>, { prefix: 'credentials' });
  if (req.connectionId) {
    const existing = await ownedConnections(knex, req)
      .where({ id: req.connectionId, integration_package_id: req.integration.id, auth_key: req.auth.key })
      .first();
    if (!existing) throw problem('not_found', { detail: `No connection ${req.connectionId} of yours for this auth`, param: 'connection_id' });
  }
  const result = await runConnectAttempt(deps, fields, {
    orgId: req.orgId,
    spaceId: req.spaceId,
    owner: req.owner,
    integrationPackageRowId: req.integration.pkg.id,
    authKey: req.auth.key,
    connectionId: req.connectionId,
    scopes: req.scopes ?? [],
  });
  if (!result.ok) throw problem('internal_error', result.detail);
  const connection = (await knex('connections').where({ id: result.connectionId, org_id: req.orgId }).first()) as ConnectionRow;
  return { connection, created: result.created };
}
