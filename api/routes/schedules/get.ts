import { scheduleSchema } from '../../../shared/schedules/model.ts';
import { defineRoute } from '../../route.ts';
import { findSchedule, scheduleDtos } from '../../resources/schedules.ts';
import { scheduleIdParam } from './_shared.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'get',
  path: '/api/schedules/:id',
  operationId: 'getSchedule',
  summary: 'Read a schedule, with its next fire time',
  tag: 'Schedules',
  auth: 'any',
  context: 'space',
  scope: 'schedules:read',
  params: scheduleIdParam,
  responses: { 200: { description: 'The schedule', schema: scheduleSchema } },
  async handler(ctx, { params }) {
    [ctx.body] = await scheduleDtos(ctx, [await findSchedule(ctx, params.id)]);
  },
});
