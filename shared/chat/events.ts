// `chat_session_update` (SPEC 6.4, shared/chat/README.md): a change signal for one chat session
// (a message stored, a reply written or failed). One NOTIFY on its own channel names the session
// and its owner; each API process's LISTEN turns it into `{object:'chat_session_update',
// session}` frames on that person's session-authenticated realtime streams in the session's
// space. No message content is in the payload.
import type { Knex } from 'knex';
import type { ChatSessionRow } from './model.ts';

export const CHAT_SESSION_UPDATES_CHANNEL = 'chat_session_updates';

export interface ChatSessionUpdateNotice {
  session_id: string;
  org_id: string;
  space_id: string;
  user_id: string;
}

export async function notifyChatSessionUpdate(knex: Knex, row: Pick<ChatSessionRow, 'id' | 'org_id' | 'space_id' | 'user_id'>): Promise<void> {
  const notice: ChatSessionUpdateNotice = { session_id: row.id, org_id: row.org_id, space_id: row.space_id, user_id: row.user_id };
  await knex.raw('select pg_notify(?, ?)', [CHAT_SESSION_UPDATES_CHANNEL, JSON.stringify(notice)]);
}
