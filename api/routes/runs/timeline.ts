import { runTimeline, timelineStepSchema } from '../../../shared/runs/timeline.ts';
import { limitFrom, SEQUENCE_MAX, setSequenceNext } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { findVisibleRun, runIdParam } from '../../resources/runs.ts';

export default defineRoute<unknown, { since: number; limit?: number }, { id: string }>({
  method: 'get',
  path: '/api/runs/:id/timeline',
  operationId: 'getRunTimeline',
  summary: "A run's steps: model calls, tool calls, `api_call`, MCP calls and commands (sequence pagination)",
  description:
    'Steps with `seq` > `since`, ascending; `limit` default and max 1000; Link rel=next while more follow. Each step has its ' +
    'start, its duration (null while it runs), its status and, for model calls, its tokens and cost; a failed step carries its ' +
    '`error`. The step under way of a running run is the last one, `running`. Steps of a run journaled without checkpoints (`RUN_CHECKPOINTS=false`) ' +
    'are not kept: its timeline shows only a failed model call.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'runs:read',
  rateLimit: { points: 120, duration: 60, by: 'identity' },
  params: runIdParam,
  query: { type: 'object', properties: { since: { type: 'integer', minimum: 0, maximum: SEQUENCE_MAX, default: 0 }, limit: { type: 'integer' } } },
  responses: { 200: { description: 'Page of steps', schema: listOf(timelineStepSchema) } },
  async handler(ctx, { params, query }) {
    const run = await findVisibleRun(ctx, params.id);
    const limit = limitFrom(query.limit, 1000, 1000);
    const { data, hasMore } = await runTimeline(ctx.services.knex, run, query.since, limit);
    if (hasMore) setSequenceNext(ctx, data[data.length - 1].seq, limit);
    ctx.body = { object: 'list', data, hasMore };
  },
});
