// What a chat session's workflow (workflows/chat/chat-session.ts) accepts from outside: each
// message, as an update (shared/chat/sessions.ts sends it). Defined once for the workflow and its
// caller; only @temporalio/workflow's definitions here, so the workflow bundle includes this file.
import { defineUpdate } from '@temporalio/workflow';

/** What a message's update answers: the id of the reply stored for it (an assistant message, completed or failed). */
export interface ChatTurnResult {
  replyId: string;
}

/** One message (`{messageId}`, the stored message's id) to answer; the update's id is the message id. */
export const chatMessageUpdate = defineUpdate<ChatTurnResult, [{ messageId: string }]>('message');
