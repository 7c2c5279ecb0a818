// Runs as route slices read them (SPEC 2.3, 5.6): which runs a caller may read (the space's runs
// with `runs:read-all`, otherwise the runs it launched; an impersonated end-user sees only its
// own), a page of them, and the reads and the cancel that the REST routes and the MCP tools share.
import type { Knex } from 'knex';
import { problem } from '../../shared/errors.ts';
import type { AccessGrant } from '../../shared/identity/access-grants.ts';
import type { Scope } from '../../shared/permissions.ts';
import { requestRunCancel } from '../../shared/runs/cancel.ts';
import { logDto } from '../../shared/runs/logs.ts';
import { RUN_SELECT, type RunRow, runDto, runSchema } from '../../shared/runs/model.ts';
import { type RunAudience, runsVisibleTo } from '../../shared/runs/visibility.ts';
import { preparedShape } from '../../shared/db/prepared.ts';
import { ACCESS_EPOCH_SQL } from '../access-cache.ts';
import { grantOf } from '../request-grant.ts';
import { limitFrom, setOffsetLinks } from '../pagination.ts';
import { listOf } from '../schemas.ts';
import type { AppContext } from '../context.ts';

/**
 * Whose runs a caller may read in its space: every run with `runs:read-all` (`only` null),
 * otherwise the runs of its impersonated end-user, of its API key, or of its user. The SQL
 * filter (`visibleRuns`) and the in-memory predicate (`canReadRun` of shared/runs/visibility.ts,
 * realtime fan-out) both derive from it, so they cannot drift apart.
 */
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

/** An offset page of runs (GET /api/runs, an agent's runs, a schedule's runs). */
export const runListResponse = {
  ...listOf(runSchema),
  properties: { ...(listOf(runSchema).properties as object), total: { type: 'integer' }, limit: { type: 'integer' }, offset: { type: 'integer' } },
};

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

/**
 * Cancels a run the caller may read (404 otherwise; 409 `run_not_cancellable` once it ended):
 * its workflow is cancelled, or without one it ends `cancelled` here. Answers the run as it is now.
 */
export async function cancelRun(ctx: AppContext, runId: string) {
  const { knex, workflows } = ctx.services;
  const run = await findVisibleRun(ctx, runId);
  await requestRunCancel(knex, workflows, run);
  return runDto(await findVisibleRun(ctx, runId));
}

/**
 * Entries with `seq` > `since` of a run the caller may read (404 otherwise), ascending; `limit`
 * default and max 1000. Debug entries need `runs:delete`.
 */
export async function runLogPage(ctx: AppContext, runId: string, since: number, rawLimit: unknown) {
  const run = await findVisibleRun(ctx, runId);
  const limit = limitFrom(rawLimit, 1000, 1000);
  const q = ctx.services
    .knex('run_logs')
    .where({ run_id: run.id })
    .where('seq', '>', since)
    .orderBy('seq')
    .limit(limit + 1);
  if (!ctx.state.tenancy!.scopes.has('runs:delete')) q.whereNot('level', 'debug');
  const rows = await q;
  const output = run.result ? { value: run.result.output } : undefined;
  return { data: rows.slice(0, limit).map((r) => logDto(r, true, output)), hasMore: rows.length > limit, limit };
}
