import type { NotificationRow } from '../../../shared/notifications/create.ts';
import { notificationDto, notificationSchema } from '../../../shared/notifications/model.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { callerNotifications } from './_shared.ts';

export default defineRoute<unknown, { unread?: boolean; limit?: number; startingAfter?: string; endingBefore?: string }>({
  method: 'get',
  path: '/api/notifications',
  operationId: 'listNotifications',
  summary: "The caller's own notifications in the space, newest first (cursor pagination)",
  description:
    'Notifications are addressed to one person: a run they launched (also through one of their API keys, or by a schedule they ' +
    'created) ended `failed` or `timeout`, the service disabled a schedule they created, or a connection of theirs needs reconnecting. ' +
    "An API key reads its creator's; a request acting for an end-user (`Service-User`) reads none. `unread=true` lists only those " +
    'without `readAt`. No permission beyond membership of the space is needed.',
  tag: 'Notifications',
  auth: 'any',
  context: 'space',
  rateLimit: { points: 300, duration: 60, by: 'identity' },
  query: { type: 'object', properties: { unread: { type: 'boolean', description: 'Only unread notifications' }, ...cursorQuery } },
  responses: { 200: { description: 'Page of notifications', schema: listOf(notificationSchema) } },
  async handler(ctx, { query }) {
    const base = callerNotifications(ctx);
    if (query.unread === true) base.whereNull('read_at');
    const { rows, hasMore } = await cursorPage<NotificationRow>(ctx, base, {
      limit: limitFrom(query.limit, 20, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
    });
    ctx.body = { object: 'list', data: rows.map(notificationDto), hasMore };
  },
});
