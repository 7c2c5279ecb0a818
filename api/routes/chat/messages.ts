import { type ChatMessageRow, chatMessageDto, chatMessageSchema } from '../../../shared/chat/model.ts';
import { limitFrom, SEQUENCE_MAX, setSequenceNext } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { listOf } from '../../schemas.ts';
import { CHAT_AUTH_NOTE, chatSessionIdParam, findCallerSession } from './_shared.ts';

export default defineRoute<unknown, { since?: number; limit?: number }, { id: string }>({
  method: 'get',
  path: '/api/chat/sessions/:id/messages',
  operationId: 'listChatMessages',
  summary: "A chat session's messages in conversation order (sequence pagination)",
  description: `User messages and the assistant's replies, oldest first; \`since\` is the \`seq\` of the last message received. ${CHAT_AUTH_NOTE}`,
  tag: 'Chat',
  auth: 'session',
  context: 'space',
  rateLimit: { points: 300, duration: 60, by: 'identity' },
  params: chatSessionIdParam,
  query: {
    type: 'object',
    properties: {
      since: { type: 'integer', minimum: 0, maximum: SEQUENCE_MAX, default: 0, description: 'Only messages with a greater `seq`' },
      limit: { type: 'integer', description: 'Page size, 100 by default, at most 1000; out of range falls back to the default' },
    },
  },
  responses: { 200: { description: 'Page of messages', schema: listOf(chatMessageSchema) } },
  async handler(ctx, { params, query }) {
    const session = await findCallerSession(ctx, params.id);
    const limit = limitFrom(query.limit, 100, 1000);
    const rows = (await ctx.services
      .knex('chat_messages')
      .where({ session_id: session.id, org_id: session.org_id, space_id: session.space_id })
      .where('seq', '>', query.since ?? 0)
      .orderBy('seq')
      .limit(limit + 1)) as ChatMessageRow[];
    const hasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    if (hasMore) setSequenceNext(ctx, page[page.length - 1].seq, limit);
    ctx.body = { object: 'list', data: page.map(chatMessageDto), hasMore };
  },
});
