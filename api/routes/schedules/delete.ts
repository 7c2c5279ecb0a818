import { defineRoute } from '../../route.ts';
import { deleteSchedule } from '../../resources/schedules.ts';
import { scheduleIdParam } from './_shared.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/schedules/:id',
  operationId: 'deleteSchedule',
  summary: 'Delete a schedule; its runs stay, still naming it',
  description:
    'Its creator (by session or one of their API keys) or an admin of the space (org owners and admins included) may delete it. ' +
    'Anyone else is 403 `forbidden` when they can read the schedule, 404 otherwise; acting for an end-user is refused (403).',
  tag: 'Schedules',
  auth: 'any',
  context: 'space',
  scope: 'schedules:delete',
  params: scheduleIdParam,
  responses: { 204: { description: 'Deleted' } },
  async handler(ctx, { params }) {
    await deleteSchedule(ctx, params.id);
    ctx.status = 204;
  },
});
