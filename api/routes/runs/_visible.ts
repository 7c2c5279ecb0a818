// Which runs a caller may read (SPEC 2.3, 5.6): the space's runs with `runs:read-all`,
// otherwise the runs it launched; an impersonated end-user sees only its own.
import type { Knex } from 'knex';
import { problem } from '../../../shared/errors.ts';
import { type RunRow, runDto } from '../../../shared/runs/model.ts';
import { setOffsetLinks } from '../../pagination.ts';
import type { AppContext } from '../../route.ts';

export function visibleRuns(ctx: AppContext): Knex.QueryBuilder {
  const { org, space, scopes, endUserId } = ctx.state.tenancy!;
  const auth = ctx.state.auth!;
  const q = ctx.services
    .knex('runs as r')
    .join('packages as p', 'p.id', 'r.package_id')
    .where({ 'r.org_id': org!.id, 'r.space_id': space!.id });
  if (endUserId) q.where('r.end_user_id', endUserId);
  else if (!scopes.has('runs:read-all')) {
    if (auth.kind === 'api_key') q.where({ 'r.actor_type': 'api_key', 'r.actor_id': auth.key.id });
    else q.where('r.user_id', auth.userId);
  }
  return q;
}

export async function findVisibleRun(ctx: AppContext, runId: string): Promise<RunRow & { scope: string; name: string }> {
  const run = await visibleRuns(ctx).where('r.id', runId).select('r.*', 'p.scope', 'p.name').first();
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
    .select('r.*', 'p.scope', 'p.name')
    .orderBy([
      { column: 'r.created_at', order: 'desc' },
      { column: 'r.id', order: 'desc' },
    ])
    .limit(limit)
    .offset(offset);
  setOffsetLinks(ctx, { limit, offset, total });
  ctx.body = { object: 'list', data: rows.map(runDto), hasMore: offset + rows.length < total, total, limit, offset };
}
