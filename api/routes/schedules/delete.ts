import { deleteTemporalSchedule } from '../../../shared/schedules/temporal.ts';
import { defineRoute } from '../../route.ts';
import { findSchedule, scheduleIdParam } from './_shared.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/schedules/:id',
  operationId: 'deleteSchedule',
  summary: 'Delete a schedule; its runs stay, still naming it',
  tag: 'Schedules',
  auth: 'any',
  context: 'space',
  scope: 'schedules:delete',
  params: scheduleIdParam,
  responses: { 204: { description: 'Deleted' } },
  async handler(ctx, { params }) {
    const schedule = await findSchedule(ctx, params.id);
    // Temporal first: a failure there leaves the schedule whole rather than firing without a row.
    await deleteTemporalSchedule(ctx.services.workflows, schedule.id);
    await ctx.services.knex('schedules').where({ id: schedule.id, org_id: schedule.org_id }).delete();
    ctx.status = 204;
  },
});
