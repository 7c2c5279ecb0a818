// How a notification looks to its recipient (`/api/notifications`): the response schema beside
// the DTO that fills it. The row and its types are create.ts's, where notifications are written.
import { NOTIFICATION_TYPES, type NotificationRow } from './create.ts';
import { dateTime } from '../json-schema.ts';

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
