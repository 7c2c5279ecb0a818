import { type ChatMessageRow, chatMessageDto, chatMessageSchema } from '../../../shared/chat/model.ts';
import { deliverMessage, storeUserMessage } from '../../../shared/chat/sessions.ts';
import { problem } from '../../../shared/errors.ts';
import { defineRoute } from '../../route.ts';
import { CHAT_AUTH_NOTE, chatSessionIdParam, findCallerSession } from './_shared.ts';

/** At most this long a request waits for the reply (the long-poll cap of SPEC 8.6). */
const MAX_WAIT_SECONDS = 55;

const exchangeSchema = (reply: 'reply' | 'none') => ({
  type: 'object',
  required: ['object', 'message', 'reply'],
  properties: {
    object: { const: 'chat_exchange' },
    message: { ...chatMessageSchema, description: 'The message sent, stored' },
    reply:
      reply === 'reply'
        ? { ...chatMessageSchema, description: "The assistant's reply (`failed` with `error` when the turn could not answer)" }
        : { type: 'null' },
  },
});

export default defineRoute<{ content: string }, { wait?: number }, { id: string }>({
  method: 'post',
  path: '/api/chat/sessions/:id/messages',
  operationId: 'sendChatMessage',
  summary: 'Send a message and wait for the reply',
  description:
    `Stores the message and hands it to the session's workflow (a Temporal update), where the agent answers it in its sandbox ` +
    `with the conversation so far. Answers 200 with the reply when the turn ends within \`wait\` seconds; otherwise 202 with ` +
    `\`reply: null\`: the turn goes on, a \`chat_session_update\` frame follows when the reply is stored, and \`GET /api/chat/sessions/{id}/messages\` ` +
    `shows it. One turn at a time: while the session is \`responding\`, another message is 409 \`conflict\`. Needs \`agents:run\`. ` +
    `${CHAT_AUTH_NOTE}`,
  tag: 'Chat',
  auth: 'session',
  context: 'space',
  scope: 'agents:run',
  rateLimit: { points: 20, duration: 60, by: 'identity' },
  params: chatSessionIdParam,
  query: {
    type: 'object',
    properties: {
      wait: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_WAIT_SECONDS,
        default: MAX_WAIT_SECONDS,
        description: `Seconds to wait for the reply before answering 202 (0 to ${MAX_WAIT_SECONDS})`,
      },
    },
  },
  body: { type: 'object', required: ['content'], additionalProperties: false, properties: { content: { type: 'string', minLength: 1, maxLength: 100_000 } } },
  responses: {
    200: { description: 'The message and its reply', schema: exchangeSchema('reply') },
    202: { description: 'The message, stored; its reply is still being written', schema: exchangeSchema('none') },
  },
  async handler(ctx, { params, query, body }) {
    const { knex, workflows, log } = ctx.services;
    const session = await findCallerSession(ctx, params.id);
    const fullName = `${session.scope}/${session.name}`;
    const { message, pending } = await storeUserMessage(knex, session.id, body.content);
    if (!message) {
      // The earlier message's update is sent again (the same update id: harmless), so a session
      // whose update was lost before Temporal held it does not stay responding.
      deliverMessage(workflows, session, fullName, pending!, 0).catch((err) =>
        log.warn({ err, sessionId: session.id }, 'chat: re-sending a pending message failed'),
      );
      throw problem(
        'conflict',
        `The session is still answering message ${pending}: wait for its reply (a chat_session_update frame, or GET \
/api/chat/sessions/${session.id}/messages), ` + `then send again`,
      );
    }
    let replyId: string | undefined;
    try {
      replyId = await deliverMessage(workflows, session, fullName, message.id, (query.wait ?? MAX_WAIT_SECONDS) * 1000);
    } catch (err) {
      // Stored and pending: the next message (409) sends it again.
      log.error({ err, sessionId: session.id }, 'chat: the message could not be handed to its workflow');
      throw problem('service_unavailable', 'The message is stored but could not be handed to the agent: the workflow service is unavailable');
    }
    const reply = replyId ? ((await knex('chat_messages').where({ id: replyId, session_id: session.id }).first()) as ChatMessageRow | undefined) : undefined;
    ctx.status = reply ? 200 : 202;
    ctx.body = { object: 'chat_exchange', message: chatMessageDto(message), reply: reply ? chatMessageDto(reply) : null };
  },
});
