// What the notification routes share: the caller's own notifications, the wire schema and the
// lookup of one of them (anyone else's is 404).
import { problem } from '../../../shared/errors.ts';
import { NOTIFICATION_TYPES, type NotificationRow } from '../../../shared/notifications/create.ts';
import type { AppContext } from '../../context.ts';
import { dateTime } from '../../schemas.ts';

/**
 * The caller's notifications in its space: those of its person (an API key's or a token's
 * creator). A request acting for an end-user (`Service-User`, a space-level token) has none.
 */
export function callerNotifications(ctx: AppContext) {
  const { org, space, endUserId } = ctx.state.tenancy!;
  const q = ctx.services.knex('notifications').where({ org_id: org!.id, space_id: space!.id, user_id: ctx.state.auth!.userId });
  return endUserId ? q.whereRaw('false') : q;
}

export async function findCallerNotification(ctx: AppContext, id: string): Promise<NotificationRow> {
  const row = (await callerNotifications(ctx).where({ id }).first()) as NotificationRow | undefined;
  if (!row) throw problem('not_found', 'No such notification');
  return row;
}

export function notificationDto(row: NotificationRow) {
  return {
    object: 'notification' as const,
    id: row.id,
    type: row.type,
    title: row.title,
    body: row.body,
    runId: row.run_id,
    scheduleId: row.schedule_id,
    connectionId: row.connection_id,
    readAt: row.read_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  };
}

export const notificationIdParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } as const;

export const notificationSchema = {
  type: 'object',
  required: ['object', 'id', 'type', 'title', 'body', 'runId', 'scheduleId', 'connectionId', 'readAt', 'createdAt'],
  properties: {
    object: { const: 'notification' },
    id: { type: 'string', pattern: '^ntf_' },
    type: { type: 'string', enum: [...NOTIFICATION_TYPES] },
    title: { type: 'string' },
    body: { type: 'string', description: 'What happened and why, for people' },
    runId: { type: ['string', 'null'], description: 'The run it is about (run.failed, run.timeout)' },
    scheduleId: { type: ['string', 'null'], description: 'The schedule it is about (schedule.disabled; the schedule of a scheduled run)' },
    connectionId: { type: ['string', 'null'], description: 'The connection it is about (connection.needs_reconnection)' },
    readAt: { ...dateTime, type: ['string', 'null'] },
    createdAt: dateTime,
  },
};
