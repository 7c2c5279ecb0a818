// What the chat routes share (shared/chat/README.md): the caller's own sessions in its space
// (anyone else's is 404) and the path parameter.
import { CHAT_SESSION_SELECT, type ChatSessionView } from '../../../shared/chat/model.ts';
import { problem } from '../../../shared/errors.ts';
import type { AppContext } from '../../context.ts';

/** The signed-in person's chat sessions in the request's space, with their agent's name. */
export function callerSessions(ctx: AppContext) {
  const { org, space } = ctx.state.tenancy!;
  return ctx.services
    .knex('chat_sessions as s')
    .join('packages as p', 'p.id', 's.package_id')
    .where({ 's.org_id': org!.id, 's.space_id': space!.id, 's.user_id': ctx.state.auth!.userId });
}

export async function findCallerSession(ctx: AppContext, id: string): Promise<ChatSessionView> {
  const row = (await callerSessions(ctx).where('s.id', id).select(CHAT_SESSION_SELECT).first()) as ChatSessionView | undefined;
  if (!row) throw problem('not_found', 'No such chat session');
  return row;
}

export const chatSessionIdParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } as const;

export const CHAT_AUTH_NOTE =
  'Chat is for signed-in people: the session cookie with X-Org-Id and X-Space-Id (an API key is 403). A session belongs to ' +
  'the person who opened it; anyone else gets 404.';
