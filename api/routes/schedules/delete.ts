import { deleteTemporalSchedule } from '../../../shared/schedules/temporal.ts';
import { defineRoute } from '../../route.ts';
import { scheduleAuthority } from './_ownership.ts';
import { findSchedule, scheduleIdParam } from './_shared.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/schedules/:id',
  operationId: 'deleteSchedule',
  summary: 'Delete a schedule; its runs stay, still naming it',
  description:
    "Its creator (by session or one of their API keys) or an admin of the space (org owners and admins included) may delete it. Anyone else is 403 `forbidden` when they can read the schedule, 404 otherwise; acting for an end-user is refused (403).",
  tag: 'Schedules',
  auth: 'any',
  context: 'space',
  scope: 'schedules:delete',
  params: scheduleIdParam,
  responses: { 204: { description: 'Deleted' } },
  async handler(ctx, { params }) {
    const schedule = await findSchedule(ctx, params.id);
    await scheduleAuthority(ctx, schedule); // the creator or an admin of the space
    // Temporal first: a failure there leaves the schedule whole rather than firing without a row.
    await deleteTemporalSchedule(ctx.services.workflows, schedule.id);
    await ctx.services.knex('schedules').where({ id: schedule.id, org_id: schedule.org_id }).delete();
    ctx.status = 204;
  },
});
