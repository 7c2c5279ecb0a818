// Opening a chat session and handing it a message (shared/chat/README.md). The session's
// workflow is started with the session; each message is stored first (so the history is in
// Postgres whatever happens next), then given to the workflow as an update whose id is the
// message id: sending it again is harmless, and a turn already answered answers at once.
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import { problem } from '../errors.ts';
import { newId } from '../ids.ts';
import { chatMessageUpdate } from '../../temporal/contract/chat.ts';
import { chatWorkflowId, startChatSessionWorkflow } from '../../temporal/starters/chat-session.ts';
import { notifyChatSessionUpdate } from './events.ts';
import type { ChatMessageRow, ChatSessionRow } from './model.ts';

/**
 * Stores `content` as the session's next user message and marks the session responding; or,
 * when the session is still answering its previous message, stores nothing and names that one.
 */
export async function storeUserMessage(knex: Knex, sessionId: string, content: string): Promise<{ message?: ChatMessageRow; pending?: string }> {
  return knex.transaction(async (trx) => {
    const session = (await trx('chat_sessions').where({ id: sessionId }).forUpdate().first()) as ChatSessionRow | undefined;
    if (!session) throw problem('not_found', 'No such chat session');
    if (session.pending_message_id) {
      return { message: undefined, pending: session.pending_message_id };
    }
    const [message] = (await trx('chat_messages')
      .insert({
        id: newId('chm'),
        session_id: session.id,
        org_id: session.org_id,
        space_id: session.space_id,
        seq: session.message_count + 1,
        role: 'user',
        content,
        status: 'completed',
      })
      .returning('*')) as ChatMessageRow[];
    await trx('chat_sessions')
      .where({ id: session.id })
      .update({ message_count: session.message_count + 1, pending_message_id: message.id, last_message_at: trx.fn.now(), updated_at: trx.fn.now() });
    await notifyChatSessionUpdate(trx, session);
    return { message };
  });
}

/**
 * Hands the message to the session's workflow and waits at most `waitMs` for its reply id
 * (undefined when the wait ends first: the turn goes on, and the reply is stored when it ends).
 * The update is sent even with no wait; with no worker running, Temporal holds it until one
 * polls again.
 */
export async function deliverMessage(
  workflows: Client,
  session: ChatSessionRow,
  fullName: string,
  messageId: string,
  waitMs: number,
): Promise<string | undefined> {
  const send = () =>
    workflows.withAbortSignal(AbortSignal.timeout(Math.max(waitMs, 2000)), () =>
      workflows.workflow.getHandle(chatWorkflowId(session.id)).executeUpdate(chatMessageUpdate, { args: [{ messageId }], updateId: messageId }),
    );
  try {
    const result = await send().catch(async (err) => {
      // The session's workflow is gone (terminated by an operator, or never started): start it again.
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      await startChatSessionWorkflow(workflows, session, fullName);
      return send();
    });
    return result.replyId;
  } catch (err) {
    if (isAbort(err)) return undefined;
    throw err;
  }
}

function isAbort(err: unknown): boolean {
  for (let e = err as { name?: string; code?: number; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    // gRPC CANCELLED (1) or DEADLINE_EXCEEDED (4), or the AbortSignal's own reason.
    if (e.name === 'AbortError' || e.name === 'TimeoutError' || e.code === 1 || e.code === 4) return true;
  }
  return false;
}
