import { limitFrom, offsetQuery, setOffsetLinks } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { type ScheduleWithPackage, scheduleDtos, scheduleSchema, spaceSchedules } from './_shared.ts';

export default defineRoute<unknown, { limit?: number; offset: number }>({
  method: 'get',
  path: '/api/schedules',
  operationId: 'listSchedules',
  summary: 'Schedules of the space, newest first',
  description: 'Offset pagination (default 20, max 100) with Link headers.',
  tag: 'Schedules',
  auth: 'any',
  context: 'space',
  scope: 'schedules:read',
  query: { type: 'object', properties: offsetQuery },
  responses: {
    200: {
      description: 'Page of schedules',
      schema: { ...listOf(scheduleSchema), properties: { ...(listOf(scheduleSchema).properties as object), total: { type: 'integer' }, limit: { type: 'integer' }, offset: { type: 'integer' } } },
    },
  },
  async handler(ctx, { query }) {
    const limit = limitFrom(query.limit, 20, 100);
    const { offset } = query;
    const [{ total }] = await spaceSchedules(ctx).clearSelect().count<{ total: number }[]>('* as total');
    const rows = (await spaceSchedules(ctx)
      .orderBy([
        { column: 's.created_at', order: 'desc' },
        { column: 's.id', order: 'desc' },
      ])
      .limit(limit)
      .offset(offset)) as ScheduleWithPackage[];
    setOffsetLinks(ctx, { limit, offset, total: Number(total) });
    ctx.body = { object: 'list', data: await scheduleDtos(ctx, rows), hasMore: offset + rows.length < Number(total), total: Number(total), limit, offset };
  },
});
