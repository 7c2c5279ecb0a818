import { logDto } from '../../../shared/runs/logs.ts';
import { limitFrom, setSequenceNext } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { findVisibleRun, runIdParam } from './_visible.ts';

const logSchema = {
  type: 'object',
  required: ['object', 'seq', 'level', 'type', 'message', 'createdAt'],
  properties: {
    object: { const: 'run_log' },
    seq: { type: 'integer' },
    level: { enum: ['debug', 'info', 'warn', 'error'] },
    type: { type: 'string' },
    message: { type: 'string' },
    data: {},
    createdAt: { type: 'string', format: 'date-time' },
  },
};

export default defineRoute<unknown, { since: number; limit?: number }, { id: string }>({
  method: 'get',
  path: '/api/runs/:id/logs',
  operationId: 'listRunLogs',
  summary: 'Log entries of a run after `since` (sequence pagination)',
  description: 'Entries with `seq` > `since`, ascending; `limit` default and max 1000; Link rel=next while more follow. Debug entries need `runs:delete`.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'runs:read',
  rateLimit: { points: 120, duration: 60, by: 'identity' },
  params: runIdParam,
  query: { type: 'object', properties: { since: { type: 'integer', minimum: 0, default: 0 }, limit: { type: 'integer' } } },
  responses: { 200: { description: 'Page of log entries', schema: listOf(logSchema) } },
  async handler(ctx, { params, query }) {
    const run = await findVisibleRun(ctx, params.id);
    const limit = limitFrom(query.limit, 1000, 1000);
    const q = ctx.services.knex('run_logs').where({ run_id: run.id }).where('seq', '>', query.since).orderBy('seq').limit(limit + 1);
    if (!ctx.state.tenancy!.scopes.has('runs:delete')) q.whereNot('level', 'debug');
    const rows = await q;
    const hasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    if (hasMore) setSequenceNext(ctx, page[page.length - 1].seq, limit);
    ctx.body = { object: 'list', data: page.map((r) => logDto(r, true)), hasMore };
  },
});
