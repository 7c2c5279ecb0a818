import { runLogSchema } from '../../../shared/runs/logs.ts';
import { SEQUENCE_MAX, setSequenceNext } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { runIdParam, runLogPage } from '../../resources/runs.ts';

const logSchema = runLogSchema("The entry's payload: a tool call's details (`tool` among them), the output of an output entry");

export default defineRoute<unknown, { since: number; limit?: number }, { id: string }>({
  method: 'get',
  path: '/api/runs/:id/logs',
  operationId: 'listRunLogs',
  summary: 'Log entries of a run after `since` (sequence pagination)',
  description:
    'Entries with `seq` (equal to `id`) > `since`, ascending; `limit` default and max 1000; Link rel=next while more follow. ' +
    'Debug entries need `runs:delete`. Each entry has the `type`/`event` pair clients render and our finer `kind`.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'runs:read',
  rateLimit: { points: 120, duration: 60, by: 'identity' },
  params: runIdParam,
  query: { type: 'object', properties: { since: { type: 'integer', minimum: 0, maximum: SEQUENCE_MAX, default: 0 }, limit: { type: 'integer' } } },
  responses: { 200: { description: 'Page of log entries', schema: listOf(logSchema) } },
  async handler(ctx, { params, query }) {
    const { data, hasMore, limit } = await runLogPage(ctx, params.id, query.since, query.limit);
    if (hasMore) setSequenceNext(ctx, data[data.length - 1].seq, limit);
    ctx.body = { object: 'list', data, hasMore };
  },
});
