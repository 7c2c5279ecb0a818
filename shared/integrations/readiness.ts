// Connection readiness (SPEC 2.7, DESIGN.md 7): for each integration an agent depends on, which
// of the actor's connections a run would use, or why none can. One module for the readiness
// route, agent launches, inline runs, schedule ticks and connection deletes, so that they agree.
//
// - The auth: `integrations_configuration[id].auth_key`, else the integration's only auth; with
//   several auths and none named, the first in the manifest in force (stored jsonb order).
// - Usable: the actor's connection of that integration and auth, not `needs_reconnection`, whose
//   scopes cover `integrations_configuration[id].scopes`. Scopes are checked for `oauth2` auths
//   only: a fields or login credential carries no provider scopes.
// - Chosen: the launch's `connections[id]` when given (it must be the actor's and of that
//   integration: 404 otherwise; if unusable the launch is refused, never silently swapped),
//   else the most recently updated usable one.
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { type ProblemFieldError, problem } from '../errors.ts';
import { newId } from '../ids.ts';
import { publishEvent } from '../events/publish.ts';
import type { ResolvedAgent } from '../packages/resolve-agent.ts';
import { splitName } from '../packages/types.ts';
import { findIntegration, type Integration } from './auths.ts';
import { type ConnectionOwner, type ConnectionRow, ownedConnections } from './connections.ts';
import { createConnectSession } from './connect-sessions.ts';

export type ReadinessStatus = 'ready' | 'missing' | 'needs_reconnection' | 'missing_scopes';

export interface CandidateConnection {
  id: string;
  label: string;
  account_id: string;
  /** Always true today: connections are never shared, only the actor's own are candidates. */
  owned_by_actor: boolean;
  needs_reconnection: boolean;
}

export interface IntegrationReadiness {
  /** The integration, '@scope/name'. */
  packageId: string;
  /** The auth a run uses (null when the integration is not visible or names no auth). */
  auth_key: string | null;
  status: ReadinessStatus;
  /** The connection a run would use (ready), else the one to reconnect or widen, else null. */
  connection_id: string | null;
  candidate_connections: CandidateConnection[];
  required_scopes: string[];
  missing_scopes: string[];
  /** `integrations_configuration[id].auth_key` as the manifest names it, else null. */
  required_auth_key: string | null;
  /** The integration's auth keys (empty when it is not visible). */
  available_auth_keys: string[];
}

export interface ReadinessScope {
  orgId: string;
  spaceId: string;
  owner: ConnectionOwner;
}

/** The integration ids an agent manifest depends on (`dependencies.integrations`). */
export function integrationDependencies(manifest: Record<string, any>): string[] {
  const deps = manifest.dependencies?.integrations;
  return deps && typeof deps === 'object' && !Array.isArray(deps) ? Object.keys(deps) : [];
}

/** The auth a run of the agent uses for `integration`, or undefined when none matches. */
export function authFor(integration: Integration | undefined, configured: string | null) {
  if (!integration) return undefined;
  if (configured) return integration.auths.find((a) => a.key === configured);
  return integration.auths[0];
}

const byRecency = (a: ConnectionRow, b: ConnectionRow) => b.updated_at.getTime() - a.updated_at.getTime() || (a.id < b.id ? 1 : -1);

/**
 * The readiness of one integration dependency. `chosen` is the launch's `connections[id]`: a
 * connection id the actor does not own, or of another integration, is 404 `not_found`.
 */
export async function integrationReadiness(
  knex: Knex,
  scope: ReadinessScope,
  manifest: Record<string, any>,
  integrationId: string,
  chosen?: string,
): Promise<IntegrationReadiness> {
  const config = (manifest.integrations_configuration?.[integrationId] ?? {}) as { scopes?: string[]; auth_key?: string };
  const requiredAuthKey = typeof config.auth_key === 'string' ? config.auth_key : null;
  const requiredScopes = [...new Set(Array.isArray(config.scopes) ? config.scopes.map(String) : [])];
  const name = splitName(integrationId);
  const integration = name ? await findIntegration(knex, scope.orgId, scope.spaceId, name.scope, name.name) : undefined;
  const auth = authFor(integration, requiredAuthKey);
  const checkScopes = auth?.type === 'oauth2';
  const base = {
    packageId: integrationId,
    auth_key: auth?.key ?? requiredAuthKey,
    required_scopes: requiredScopes,
    required_auth_key: requiredAuthKey,
    available_auth_keys: integration?.auths.map((a) => a.key) ?? [],
  };

  let picked: ConnectionRow | undefined;
  if (chosen) {
    picked = (await ownedConnections(knex, scope).where({ id: chosen, integration_package_id: integrationId }).first()) as ConnectionRow | undefined;
    if (!picked) {
      throw problem('not_found', {
        detail: `No connection ${chosen} of yours to ${integrationId} in this space`,
        errors: [
          {
            field: `connections.${integrationId}`,
            code: 'not_found',
            message: `No connection ${chosen} of yours to ${integrationId}`,
            connection_id: chosen,
            packageId: integrationId,
          },
        ],
      });
    }
  }
  const rows = auth
    ? ((await ownedConnections(knex, scope).where({ integration_package_id: integrationId, auth_key: auth.key })) as ConnectionRow[]).sort(byRecency)
    : [];
  const candidates = rows.map((r) => ({ id: r.id, label: r.label, account_id: r.account_id, owned_by_actor: true, needs_reconnection: r.needs_reconnection }));
  const missingOf = (r: ConnectionRow) => (checkScopes ? requiredScopes.filter((s) => !r.scopes.includes(s)) : []);
  const result = (status: ReadinessStatus, row: ConnectionRow | undefined): IntegrationReadiness => ({
    ...base,
    status,
    connection_id: row?.id ?? null,
    candidate_connections: candidates,
    missing_scopes: row && status === 'missing_scopes' ? missingOf(row) : status === 'missing' ? (checkScopes ? requiredScopes : []) : [],
  });

  if (picked) {
    if (!auth || picked.auth_key !== auth.key) return result('missing', undefined);
    if (picked.needs_reconnection) return result('needs_reconnection', picked);
    return result(missingOf(picked).length > 0 ? 'missing_scopes' : 'ready', picked);
  }
  const usable = rows.find((r) => !r.needs_reconnection && missingOf(r).length === 0);
  if (usable) return result('ready', usable);
  const live = rows.find((r) => !r.needs_reconnection);
  if (live) return result('missing_scopes', live);
  if (rows.length > 0) return result('needs_reconnection', rows[0]);
  return result('missing', undefined);
}

/** Every integration dependency of the manifest, in manifest order. */
export async function agentReadiness(
  knex: Knex,
  scope: ReadinessScope,
  manifest: Record<string, any>,
  chosen: Record<string, string> = {},
): Promise<IntegrationReadiness[]> {
  const deps = integrationDependencies(manifest);
  const unknown = Object.keys(chosen).filter((id) => !deps.includes(id));
  if (unknown.length > 0) {
    throw problem('validation_failed', {
      detail: `connections names ${unknown[0]}, which the agent does not depend on`,
      errors: unknown.map((id) => ({ field: `connections.${id}`, code: 'unknown_integration', message: `The agent does not depend on ${id}` })),
    });
  }
  const out: IntegrationReadiness[] = [];
  for (const id of deps) out.push(await integrationReadiness(knex, scope, manifest, id, chosen[id]));
  return out;
}

const MESSAGES: Record<Exclude<ReadinessStatus, 'ready'>, (r: IntegrationReadiness) => string> = {
  missing: (r) =>
    r.auth_key && r.available_auth_keys.includes(r.auth_key)
      ? `No connection to ${r.packageId} (auth ${r.auth_key}): connect one at connect_url`
      : r.available_auth_keys.length > 0
        ? `${r.packageId} has no auth ${r.required_auth_key ?? ''} (available: ${r.available_auth_keys.join(', ')})`
        : `${r.packageId} is not available in this space`,
  needs_reconnection: (r) => `The connection ${r.connection_id} to ${r.packageId} needs reconnection: reconnect it at connect_url`,
  missing_scopes: (r) => `The connection ${r.connection_id} to ${r.packageId} lacks the scopes ${r.missing_scopes.join(', ')}: reconnect it at connect_url`,
};

/**
 * The refusal entry of one unready integration (SPEC 7.2 error fields). With `links`, a fresh
 * hosted connect link for the auth (refreshing the connection to reconnect or widen in place);
 * without, `connect_url` and `expiresAt` are null.
 */
export async function refusalError(knex: Knex, scope: ReadinessScope, r: IntegrationReadiness, publicUrl: string | null): Promise<ProblemFieldError> {
  const connectable = r.auth_key !== null && r.available_auth_keys.includes(r.auth_key);
  const link =
    publicUrl && connectable
      ? await createConnectSession(knex, publicUrl, {
          orgId: scope.orgId,
          spaceId: scope.spaceId,
          integrationId: r.packageId,
          authKey: r.auth_key!,
          owner: scope.owner,
          scopes: r.required_scopes.length > 0 ? r.required_scopes : undefined,
          connectionId: r.status === 'missing' ? undefined : (r.connection_id ?? undefined),
        })
      : null;
  return {
    field: `manifest.dependencies.integrations.${r.packageId}`,
    code: r.status === 'ready' || r.status === 'missing' ? 'connection_missing' : r.status,
    message: r.status === 'ready' ? '' : MESSAGES[r.status](r),
    packageId: r.packageId,
    auth_key: r.auth_key,
    required_auth_key: r.required_auth_key,
    available_auth_keys: r.available_auth_keys,
    connection_id: r.connection_id,
    candidate_connections: r.candidate_connections,
    missing_scopes: r.missing_scopes,
    required_scopes: r.required_scopes,
    connect_url: link?.connect_url ?? null,
    expiresAt: link?.expiresAt ?? null,
  };
}

export interface LaunchCheck extends ReadinessScope {
  agent: Pick<ResolvedAgent, 'fullName' | 'manifest'>;
  /** The launch body's `connections`. */
  chosen?: Record<string, string>;
  /** Hosted links go to the caller (a request); a schedule tick has no one to hand them to. */
  publicUrl: string | null;
  /** The event id: deterministic for a retried tick, random otherwise. */
  eventId?: string;
}

/**
 * Before a run exists: the connection each integration dependency will use ({id: conn id}), or
 * 409 `connection_missing` with one `errors[]` entry per unready integration, after publishing
 * `run.connection_missing` (SPEC 2.5: a `run_attempt`, no run). The event's errors carry no
 * connect link: a link lets whoever holds it connect as the actor, and webhooks are not the actor.
 * Without `workflows` (a validation that launches nothing) no event is published.
 */
export async function requireConnections(knex: Knex, workflows: Client | null, check: LaunchCheck): Promise<Record<string, string>> {
  const readiness = await agentReadiness(knex, check, check.agent.manifest, check.chosen);
  const unready = readiness.filter((r) => r.status !== 'ready');
  if (unready.length === 0) return Object.fromEntries(readiness.map((r) => [r.packageId, r.connection_id!]));
  const errors: ProblemFieldError[] = [];
  for (const r of unready) errors.push(await refusalError(knex, check, r, check.publicUrl));
  if (workflows) {
    await publishEvent(knex, workflows, {
      id: check.eventId ?? newId('evt'),
      type: 'run.connection_missing',
      orgId: check.orgId,
      spaceId: check.spaceId,
      packageId: check.agent.fullName,
      object: {
        object: 'run_attempt',
        packageId: check.agent.fullName,
        actor: { type: check.owner.type, id: check.owner.id },
        errors: errors.map(({ connect_url: _u, expiresAt: _e, ...rest }) => rest),
      },
      occurredAt: new Date(),
    });
  }
  throw problem('connection_missing', {
    detail:
      unready.length === 1
        ? String(errors[0].message)
        : `${unready.length} integrations lack a usable connection: ${unready.map((r) => r.packageId).join(', ')}`,
    errors,
  });
}
