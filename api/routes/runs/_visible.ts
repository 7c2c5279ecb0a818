// Which runs a caller may read (SPEC 2.3, 5.6): the space's runs with `runs:read-all`,
// otherwise the runs it launched; an impersonated end-user sees only its own.
import type { Knex } from 'knex';
import { problem } from '../../../shared/errors.ts';
import type { AccessGrant } from '../../../shared/identity/access-grants.ts';
import type { Scope } from '../../../shared/permissions.ts';
import { RUN_SELECT, type RunRow, runDto } from '../../../shared/runs/model.ts';
import { canReadRun, type RunAudience, runsVisibleTo } from '../../../shared/runs/visibility.ts';
import { preparedShape } from '../../../shared/db/prepared.ts';
import { ACCESS_EPOCH_SQL } from '../../access-cache.ts';
import { grantOf } from '../../request-grant.ts';
import { setOffsetLinks } from '../../pagination.ts';
import type { AppContext } from '../../context.ts';

/**
 * Whose runs a caller may read in its space: every run with `runs:read-all` (`only` null),
 * otherwise the runs of its impersonated end-user, of its API key, or of its user. The SQL
 * filter (`visibleRuns`) and the in-memory predicate (`canReadRun`, realtime fan-out) both
 * derive from it, so they cannot drift apart.
 */
export type { RunAudience };
export { canReadRun };

export function runAudience(ctx: AppContext): RunAudience {
  return audienceOf(grantOf(ctx), ctx.state.tenancy!.scopes);
}

/** The audience of a grant holding `scopes` (re-derived when a stream's access changes). */
export function audienceOf(grant: AccessGrant, scopes: ReadonlySet<Scope>): RunAudience {
  let only: RunAudience['only'] = null;
  if (grant.endUserId) only = { endUserId: grant.endUserId };
  else if (!scopes.has('runs:read-all')) only = grant.kind === 'api_key' ? { apiKeyId: grant.credentialId } : { userId: grant.userId };
  return { orgId: grant.orgId, spaceId: grant.spaceId, only };
}

export function visibleRuns(ctx: AppContext): Knex.QueryBuilder {
  return runsVisibleTo(ctx.services.knex, runAudience(ctx));
}

export async function findVisibleRun(ctx: AppContext, runId: string): Promise<RunRow & { scope: string; name: string; has_files: boolean }> {
  const { knex } = ctx.services;
  const access = ctx.state.access;
  // `has_files` spares a run without files (most) the second query of a read with its files; an
  // optimistic request (RouteDef.confirmsAccess) reads the access epoch in the same query.
  const columns = [...RUN_SELECT, knex.raw('exists (select 1 from files f where f.run_id = r.id) as has_files')];
  const confirming = access?.optimistic === true;
  if (confirming) columns.push(knex.raw(`${ACCESS_EPOCH_SQL} as access_epoch`));
  const audience = runAudience(ctx);
  const only = audience.only ? (Object.entries(audience.only)[0] as [string, string]) : undefined;
  const shape = `run-read:${only?.[0] ?? 'all'}:${confirming}`;
  const values = [audience.orgId, audience.spaceId, runId, ...(only ? [only[1]] : [])];
  const [run] = await preparedShape<RunRow & { scope: string; name: string; has_files: boolean; access_epoch: string }>(
    knex,
    shape,
    values,
    (orgId: string, spaceId: string, id: string, onlyValue?: string) =>
      runsVisibleTo(knex, { orgId, spaceId, only: only ? ({ [only[0]]: onlyValue } as RunAudience['only']) : null })
        .where('r.id', id)
        .select(columns)
        .first(),
  );
  if (confirming) {
    if (run) access!.confirm(run.access_epoch);
    else await access!.settle(knex);
  }
  if (!run) throw problem('not_found', 'No such run');
  return run;
}

export const runIdParam = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1 } },
} as const;

/** Responds with one offset page of the query's runs, newest first, with Link headers. */
export async function respondWithRunPage(ctx: AppContext, q: Knex.QueryBuilder, limit: number, offset: number): Promise<void> {
  const [{ total }] = await q.clone().count<{ total: number }[]>('* as total');
  const rows = await q
    .select(RUN_SELECT)
    .orderBy([
      { column: 'r.created_at', order: 'desc' },
      { column: 'r.id', order: 'desc' },
    ])
    .limit(limit)
    .offset(offset);
  setOffsetLinks(ctx, { limit, offset, total });
  ctx.body = { object: 'list', data: rows.map(runDto), hasMore: offset + rows.length < total, total, limit, offset };
}
