// The chat module's activities (shared/chat/README.md). `chatTurn` answers one user message: it
// reads the conversation so far from Postgres, runs the agent's runtime in the sandbox with it
// (activities/chat/sidecar.ts: the model is reached only through the sidecar), and stores the
// reply with the turn's usage, once, however often the turn is retried. `failChatTurn` stores a
// failed reply when a turn cannot finish. Each stored reply signals the session's owner.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { notifyChatSessionUpdate } from '../../shared/chat/events.ts';
import type { ChatMessageRow, ChatSessionRow } from '../../shared/chat/model.ts';
import { newId } from '../../shared/ids.ts';
import { modelDispatcher } from '../../shared/models/outbound.ts';
import { NO_MODEL_CONFIGURED, resolveModel } from '../../shared/models/resolve.ts';
import { addUsage, NO_USAGE } from '../../shared/models/usage.ts';
import { agentForRun } from '../../shared/packages/resolve-agent.ts';
import { skillFiles } from '../../shared/packages/store.ts';
import { HEARTBEAT_TIMEOUT_SECONDS } from '../../shared/runs/attempts.ts';
import { loadPins, userActorKey } from '../../shared/runs/memory.ts';
import type { RunUsage } from '../../shared/runs/model.ts';
import type { ActivityDeps } from '../deps.ts';
import { inSandboxSession } from '../sandbox/session.ts';
import { SandboxUnavailableError, sandboxModeFor } from '../sandbox/spawn.ts';
import { materializeSkills } from '../sandbox/skills.ts';
import { codeFolders } from '../sandbox/workspace.ts';
import { fileToolsOf } from '../sidecar/file-tools.ts';
import type { ChatMessage } from '../sidecar/protocol.ts';
import { PromptTemplateInvalid, renderChatPrompt } from '../run-prompt.ts';
import { systemPrompt } from '../sidecar/server.ts';
import { runsCode } from '../sidecar/workspace-tools.ts';
import { ChatSidecar } from './sidecar.ts';

const CHAT_FINISH = 'You are in a conversation with a person. Answer their last message in plain text.';

interface Reply {
  content: string;
  status: 'completed' | 'failed';
  error: string | null;
  usage: RunUsage;
}

/**
 * Stores the reply to `messageId` and updates the session (count, usage, idle again) in one
 * transaction, then signals its owner. A reply already stored wins: a retried turn stores nothing twice.
 */
export async function storeReply(knex: Knex, sessionId: string, messageId: string, reply: Reply): Promise<{ replyId: string }> {
  const stored = await knex.transaction(async (trx) => {
    const session = (await trx('chat_sessions').where({ id: sessionId }).forUpdate().first()) as ChatSessionRow | undefined;
    if (!session) throw ApplicationFailure.nonRetryable('The chat session no longer exists', 'ChatSessionGone');
    const existing = await trx('chat_messages').where({ session_id: sessionId, reply_to: messageId }).first('id');
    if (existing) return { replyId: existing.id as string, session: undefined };
    const id = newId('chm');
    await trx('chat_messages').insert({
      id,
      session_id: sessionId,
      org_id: session.org_id,
      space_id: session.space_id,
      seq: session.message_count + 1,
      role: 'assistant',
      content: reply.content,
      status: reply.status,
      error: reply.error,
      reply_to: messageId,
      usage: JSON.stringify(reply.usage),
    });
    await addUsage(trx, 'chat_sessions', sessionId, reply.usage);
    await trx('chat_sessions')
      .where({ id: sessionId })
      .update({
        message_count: session.message_count + 1,
        pending_message_id: session.pending_message_id === messageId ? null : session.pending_message_id,
        last_message_at: trx.fn.now(),
        updated_at: trx.fn.now(),
      });
    await notifyChatSessionUpdate(trx, session);
    return { replyId: id, session };
  });
  return { replyId: stored.replyId };
}

export function createChatActivities(deps: ActivityDeps) {
  const { knex, config, log } = deps;
  const failed = (error: string, usage: RunUsage = NO_USAGE): Reply => ({ content: '', status: 'failed', error, usage });

  return {
    async chatTurn(sessionId: string, messageId: string): Promise<{ replyId: string }> {
      const ctx = Context.current();
      const session = (await knex('chat_sessions').where({ id: sessionId }).first()) as ChatSessionRow | undefined;
      if (!session) throw ApplicationFailure.nonRetryable('The chat session no longer exists', 'ChatSessionGone');
      const done = await knex('chat_messages').where({ session_id: sessionId, reply_to: messageId }).first('id');
      if (done) return { replyId: done.id };
      const asked = (await knex('chat_messages').where({ session_id: sessionId, id: messageId, role: 'user' }).first()) as ChatMessageRow | undefined;
      if (!asked) throw ApplicationFailure.nonRetryable(`No message ${messageId} in the chat session`, 'ChatMessageGone');
      // A retried turn is one whose worker was lost (or shut down): it starts over, until RUN_MAX_WORKER_LOSSES losses.
      const losses = ctx.info.attempt - 1;
      if (losses >= config.runMaxWorkerLosses) {
        const why =
          `The turn lost its worker ${losses} times (each stopped responding for ${HEARTBEAT_TIMEOUT_SECONDS} s); RUN_MAX_WORKER_LOSSES ` +
          `is ${config.runMaxWorkerLosses}`;
        return storeReply(knex, sessionId, messageId, failed(why));
      }
      const agent = await agentForRun(knex, session);
      if (!agent) return storeReply(knex, sessionId, messageId, failed(`Version ${session.package_version} of the agent is no longer available`));
      const model = await resolveModel(knex, config, session.org_id);
      if (!model) return storeReply(knex, sessionId, messageId, failed(NO_MODEL_CONFIGURED));
      // The conversation so far: every completed message up to the one answered (failed replies are left out).
      const history = (await knex('chat_messages')
        .where({ session_id: sessionId, status: 'completed' })
        .where('seq', '<=', asked.seq)
        .orderBy('seq')
        .select('role', 'content')) as Array<Pick<ChatMessageRow, 'role' | 'content'>>;
      const conversation: ChatMessage[] = history.map((m) => ({ role: m.role, content: m.content }));
      // Pins are the agent's memory for this person, as in their runs.
      const pins = await loadPins(knex, agent.packageId, userActorKey(session.user_id));
      let dispatcher: Awaited<ReturnType<typeof modelDispatcher>>;
      try {
        dispatcher = await modelDispatcher(config, model);
      } catch (err) {
        return storeReply(knex, sessionId, messageId, failed(`The model cannot be called: ${(err as Error).message}`));
      }
      // An agent that runs code has its workspace tools here too (DESIGN.md 9), under the same
      // ceilings as in its runs; its workspace lasts the turn.
      const code = runsCode(agent);
      let processMode = false;
      if (code) {
        try {
          processMode = sandboxModeFor(agent.runtimeTools, config.sandboxLimits) === 'process';
        } catch (err) {
          await dispatcher.close();
          if (err instanceof SandboxUnavailableError) return storeReply(knex, sessionId, messageId, failed(err.message));
          throw err;
        }
      }
      const tools = code ? fileToolsOf(agent) : [];
      // prompt.md is a template in chat as in runs (DESIGN.md 5).
      let prompt: string;
      try {
        prompt = await renderChatPrompt(knex, { session, agent, actorKey: userActorKey(session.user_id), askedAt: asked.created_at });
      } catch (err) {
        await dispatcher.close();
        if (err instanceof PromptTemplateInvalid) return storeReply(knex, sessionId, messageId, failed(err.message));
        throw err;
      }
      const sidecar = new ChatSidecar(
        {
          messageId,
          system: systemPrompt({ ...agent, prompt }, pins, tools, CHAT_FINISH, { returned: false, integrations: [] }),
          conversation,
          model,
          tools,
          endsAt: Date.now() + session.turn_timeout_seconds * 1000,
        },
        { dispatcher, maxRequestBytes: config.llmProxyLimits.max_request_bytes, log },
      );
      // In a warm sandbox when one waits, as a run: it serves this turn only. A draining worker
      // stops the sandbox; the turn starts over on another worker.
      const end = await inSandboxSession({ kind: 'chat turn', name: messageId, logFields: { sessionId, messageId }, ctx }, deps, async (turn) => {
        turn.defer(() => dispatcher.close());
        let folders: Awaited<ReturnType<typeof codeFolders>>['folders'] | undefined;
        if (code) {
          const workspace = await codeFolders(turn.warmFolder({ code }), { diskMb: config.platformRunLimits.agent_disk_ceiling_mb, processMode });
          turn.defer(() => workspace.remove());
          folders = workspace.folders;
          await materializeSkills(folders.skillsDir!, await skillFiles(knex, session.org_id, agent.skills));
        }
        await turn.start(sidecar, folders);
        return turn.supervise({ progress: () => ({ modelCalls: sidecar.modelCalls }), timeoutMs: session.turn_timeout_seconds * 1000 });
      });
      if (sidecar.reply !== undefined) {
        return storeReply(knex, sessionId, messageId, { content: sidecar.reply, status: 'completed', error: null, usage: sidecar.usage });
      }
      end.throwIfStopped();
      const reason = end.timedOut
        ? `The reply took longer than the agent's timeout of ${session.turn_timeout_seconds} s`
        : (sidecar.fatalError ?? end.exitReason('a reply'));
      return storeReply(knex, sessionId, messageId, failed(reason, sidecar.usage));
    },

    /** The turn could not finish (its activity failed for good): a failed reply says why. */
    async failChatTurn(sessionId: string, messageId: string, reason: string): Promise<{ replyId: string }> {
      return storeReply(knex, sessionId, messageId, failed(reason));
    },
  };
}
