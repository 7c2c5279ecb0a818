// What the notification routes share: the caller's own notifications and the lookup of one of
// them (anyone else's is 404). Their wire shape is shared/notifications/model.ts.
import { problem } from '../../../shared/errors.ts';
import type { NotificationRow } from '../../../shared/notifications/create.ts';
import type { AppContext } from '../../context.ts';

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

export const notificationIdParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } as const;
