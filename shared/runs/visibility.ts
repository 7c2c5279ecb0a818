// Whose runs a caller may read in its space (SPEC 2.3, 5.6), as SQL: every run with
// `runs:read-all` (`only` null), otherwise those of its impersonated end-user, of its API key,
// or of its user. api/resources/runs.ts derives the audience from a request; a bulk job
// stores it and applies it again in its activities.
import type { Knex } from 'knex';
import { type RunRow, runsWithPackage } from './model.ts';

export interface RunAudience {
  orgId: string;
  spaceId: string;
  only: { endUserId: string } | { apiKeyId: string } | { userId: string } | null;
}

/** Runs (`r`, joined to their package `p`) that `audience` may read. */
export function runsVisibleTo(knex: Knex, audience: RunAudience): Knex.QueryBuilder {
  const { orgId, spaceId, only } = audience;
  const q = runsWithPackage(knex).where({ 'r.org_id': orgId, 'r.space_id': spaceId });
  if (only && 'endUserId' in only) q.where('r.end_user_id', only.endUserId);
  else if (only && 'apiKeyId' in only) q.where({ 'r.actor_type': 'api_key', 'r.actor_id': only.apiKeyId });
  else if (only) q.where('r.user_id', only.userId);
  return q;
}

/** The run-visibility predicate: true when `audience` may read `run` (same rule as `visibleRuns`). */
export function canReadRun(audience: RunAudience, run: Pick<RunRow, 'org_id' | 'space_id' | 'end_user_id' | 'actor_type' | 'actor_id' | 'user_id'>): boolean {
  if (run.org_id !== audience.orgId || run.space_id !== audience.spaceId) return false;
  const only = audience.only;
  if (!only) return true;
  if ('endUserId' in only) return run.end_user_id === only.endUserId;
  if ('apiKeyId' in only) return run.actor_type === 'api_key' && run.actor_id === only.apiKeyId;
  return run.user_id === only.userId;
}
