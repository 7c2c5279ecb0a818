// Chat sessions and messages (shared/chat/README.md): rows, their wire shapes and schemas, shared
// by the routes, the turn activity and the realtime fan-out.
import type { RunUsage } from '../runs/model.ts';
import { dateTime } from '../json-schema.ts';

export interface ChatSessionRow {
  id: string;
  org_id: string;
  space_id: string;
  user_id: string;
  package_id: string;
  package_version: string;
  turn_timeout_seconds: number;
  pending_message_id: string | null;
  message_count: number;
  usage: RunUsage;
  last_message_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A session row with its agent's `@scope/name` (`chatSessionsWithPackage`). */
export type ChatSessionView = ChatSessionRow & { scope: string; name: string };

export interface ChatMessageRow {
  id: string;
  session_id: string;
  org_id: string;
  space_id: string;
  seq: number;
  role: 'user' | 'assistant';
  content: string;
  status: 'completed' | 'failed';
  error: string | null;
  reply_to: string | null;
  usage: RunUsage | null;
  created_at: Date;
}

/** Sessions joined with their package (for `packageId`); filter on `s.` columns. */
export const CHAT_SESSION_SELECT = ['s.*', 'p.scope', 'p.name'];

export function chatSessionDto(row: ChatSessionView) {
  return {
    object: 'chat_session' as const,
    id: row.id,
    packageId: `${row.scope}/${row.name}`,
    version: row.package_version,
    status: row.pending_message_id ? ('responding' as const) : ('idle' as const),
    messageCount: row.message_count,
    usage: row.usage,
    lastMessageAt: row.last_message_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function chatMessageDto(row: ChatMessageRow) {
  return {
    object: 'chat_message' as const,
    id: row.id,
    sessionId: row.session_id,
    seq: row.seq,
    role: row.role,
    content: row.content,
    status: row.status,
    error: row.error,
    replyTo: row.reply_to,
    usage: row.usage,
    createdAt: row.created_at.toISOString(),
  };
}

const usageSchema = {
  type: 'object',
  required: ['inputTokens', 'outputTokens', 'costUsd'],
  properties: { inputTokens: { type: 'integer' }, outputTokens: { type: 'integer' }, costUsd: { type: 'number' } },
} as const;

export const chatSessionSchema = {
  type: 'object',
  required: ['object', 'id', 'packageId', 'version', 'status', 'messageCount', 'usage', 'lastMessageAt', 'createdAt', 'updatedAt'],
  properties: {
    object: { const: 'chat_session' },
    id: { type: 'string', pattern: '^chs_' },
    packageId: { type: 'string', description: 'The agent, `@scope/name`' },
    version: { type: 'string', description: 'The agent version every turn of the session runs (chosen when it was opened)' },
    status: { enum: ['idle', 'responding'], description: '`responding` while the agent writes the reply to the last message' },
    messageCount: { type: 'integer', description: 'User and assistant messages so far' },
    usage: { ...usageSchema, description: 'Model tokens and cost of every turn so far' },
    lastMessageAt: { ...dateTime, type: ['string', 'null'] },
    createdAt: dateTime,
    updatedAt: dateTime,
  },
};

export const chatMessageSchema = {
  type: 'object',
  required: ['object', 'id', 'sessionId', 'seq', 'role', 'content', 'status', 'error', 'replyTo', 'usage', 'createdAt'],
  properties: {
    object: { const: 'chat_message' },
    id: { type: 'string', pattern: '^chm_' },
    sessionId: { type: 'string', pattern: '^chs_' },
    seq: { type: 'integer', minimum: 1, description: 'Position in the conversation' },
    role: { enum: ['user', 'assistant'] },
    content: { type: 'string', description: "The message; an assistant message that `failed` has ''" },
    status: {
      enum: ['completed', 'failed'],
      description: "`failed`: the turn ended without a reply (`error` says why); it is left out of the next turns' conversation",
    },
    error: { type: ['string', 'null'] },
    replyTo: { type: ['string', 'null'], description: 'Assistant messages: the user message answered' },
    usage: { oneOf: [usageSchema, { type: 'null' }], description: "Assistant messages: the turn's model usage" },
    createdAt: dateTime,
  },
};
