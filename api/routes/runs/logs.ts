import { logDto, runLogSchema } from '../../../shared/runs/logs.ts';
import { limitFrom, setSequenceNext } from '../../pagination.ts';
import type { AppContext } from '../../context.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { findVisibleRun, runIdParam } from './_visible.ts';

const logSchema = runLogSchema('The entry\'s payload: a tool call\'s details (`tool` among them), the output of an output entry');

/**
 * Entries with `seq` > `since` of a run the caller may read (404 otherwise), ascending; `limit`
 * default and max 1000. Debug entries need `runs:delete`.
 */
export async function runLogPage(ctx: AppContext, runId: string, since: number, rawLimit: unknown) {
  const run = await findVisibleRun(ctx, runId);
  const limit = limitFrom(rawLimit, 1000, 1000);
  const q = ctx.services.knex('run_logs').where({ run_id: run.id }).where('seq', '>', since).orderBy('seq').limit(limit + 1);
  if (!ctx.state.tenancy!.scopes.has('runs:delete')) q.whereNot('level', 'debug');
  const rows = await q;
  const output = run.result ? { value: run.result.output } : undefined;
  return { data: rows.slice(0, limit).map((r) => logDto(r, true, output)), hasMore: rows.length > limit, limit };
}

export default defineRoute<unknown, { since: number; limit?: number }, { id: string }>({
  method: 'get',
  path: '/api/runs/:id/logs',
  operationId: 'listRunLogs',
  summary: 'Log entries of a run after `since` (sequence pagination)',
  description:
    'Entries with `seq` (equal to `id`) > `since`, ascending; `limit` default and max 1000; Link rel=next while more follow. Debug entries need `runs:delete`. Each entry has the `type`/`event` pair clients render and our finer `kind`.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'runs:read',
  rateLimit: { points: 120, duration: 60, by: 'identity' },
  params: runIdParam,
  query: { type: 'object', properties: { since: { type: 'integer', minimum: 0, default: 0 }, limit: { type: 'integer' } } },
  responses: { 200: { description: 'Page of log entries', schema: listOf(logSchema) } },
  async handler(ctx, { params, query }) {
    const { data, hasMore, limit } = await runLogPage(ctx, params.id, query.since, query.limit);
    if (hasMore) setSequenceNext(ctx, data[data.length - 1].seq, limit);
    ctx.body = { object: 'list', data, hasMore };
  },
});
