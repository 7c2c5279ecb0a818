import { CHAT_SESSION_SELECT, type ChatSessionView, chatSessionDto, chatSessionSchema } from '../../../shared/chat/model.ts';
import { cursorPage, cursorQuery, limitFrom } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { CHAT_AUTH_NOTE, callerSessions } from './_shared.ts';

export default defineRoute<unknown, { limit?: number; startingAfter?: string; endingBefore?: string }>({
  method: 'get',
  path: '/api/chat/sessions',
  operationId: 'listChatSessions',
  summary: "The caller's chat sessions in the space, newest first (cursor pagination, 100 by default)",
  description: CHAT_AUTH_NOTE,
  tag: 'Chat',
  auth: 'session',
  context: 'space',
  rateLimit: { points: 300, duration: 60, by: 'identity' },
  query: { type: 'object', properties: { ...cursorQuery } },
  responses: { 200: { description: 'Page of chat sessions', schema: listOf(chatSessionSchema) } },
  async handler(ctx, { query }) {
    const { rows, hasMore } = await cursorPage<ChatSessionView>(ctx, callerSessions(ctx).select(CHAT_SESSION_SELECT), {
      limit: limitFrom(query.limit, 100, 100),
      startingAfter: query.startingAfter,
      endingBefore: query.endingBefore,
      key: 's.id',
      createdAt: 's.created_at',
    });
    ctx.body = { object: 'list', data: rows.map(chatSessionDto), hasMore };
  },
});
