import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { type ScheduleWithPackage, scheduleSchema } from '../../../shared/schedules/model.ts';
import { scheduleDtos, spaceSchedules } from '../../resources/schedules.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }>({
  method: 'get',
  path: '/api/schedules',
  operationId: 'listSchedules',
  summary: 'Schedules of the space, newest first (cursor pagination)',
  description: 'Cursor pagination (default 20, max 100) with Link headers. The runs of one schedule are offset pages (`/api/schedules/{id}/runs`).',
  tag: 'Schedules',
  auth: 'any',
  context: 'space',
  scope: 'schedules:read',
  query: { type: 'object', properties: cursorQuery },
  responses: { 200: { description: 'Page of schedules', schema: listOf(scheduleSchema) } },
  async handler(ctx, { query }) {
    // Qualified columns: the schedules are joined with their packages.
    const { rows, hasMore } = await cursorPage<ScheduleWithPackage>(ctx, spaceSchedules(ctx), {
      key: 's.id',
      createdAt: 's.created_at',
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: await scheduleDtos(ctx, rows), hasMore };
  },
});
