import type { NotificationRow } from '../../../shared/notifications/create.ts';
import { notificationDto, notificationSchema } from '../../../shared/notifications/model.ts';
import { defineRoute } from '../../route.ts';
import { callerNotifications, findCallerNotification, notificationIdParam } from './_shared.ts';

export default defineRoute<{ read: boolean }, unknown, { id: string }>({
  method: 'patch',
  path: '/api/notifications/:id',
  operationId: 'updateNotification',
  summary: 'Mark one of your notifications read or unread',
  description:
    '`{read: true}` sets `readAt` (once: marking a read notification read again keeps its `readAt`); `{read: false}` clears it. ' +
    "Anyone else's notification is 404.",
  tag: 'Notifications',
  auth: 'any',
  context: 'space',
  rateLimit: { points: 60, duration: 60, by: 'identity' },
  params: notificationIdParam,
  body: { type: 'object', additionalProperties: false, required: ['read'], properties: { read: { type: 'boolean' } } },
  responses: { 200: { description: 'The notification', schema: notificationSchema } },
  async handler(ctx, { body, params }) {
    const current = await findCallerNotification(ctx, params.id);
    const { knex } = ctx.services;
    const [row] = (await callerNotifications(ctx)
      .where({ id: current.id })
      .update({ read_at: body.read ? knex.raw('coalesce(read_at, now())') : null })
      .returning('*')) as NotificationRow[];
    ctx.body = notificationDto(row ?? current);
  },
});
