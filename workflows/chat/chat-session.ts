// chatSession (DESIGN.md 7, shared/chat/README.md): one long-lived workflow per chat session,
// `chat:<chs id>` on the agent-runs queue. Each message is a Temporal update carrying only the
// stored message's id; turns run one at a time: `chatTurn` runs the agent in the sandbox with the
// conversation so far (read from Postgres) and stores the reply, which the update returns. A turn
// whose worker is lost is retried on another worker; one that cannot finish stores a failed reply.
// History stays small: the workflow continues as new when Temporal suggests it, between turns.
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { createChatActivities } from '../../activities/chat/turn.ts';
import { EXECUTE_AGENT_RETRY, HEARTBEAT_TIMEOUT_SECONDS } from '../../shared/runs/attempts.ts';
import { chatMessageUpdate } from '../../temporal/contract/chat.ts';
import { AGENT_SANDBOX_TASK_QUEUE } from '../../temporal/contract/queues.ts';
import type { ChatSessionInput } from '../../temporal/contract/workflows.ts';

type ChatActivities = ReturnType<typeof createChatActivities>;

function describe(err: unknown): string {
  if (err instanceof ActivityFailure) {
    if (err.cause instanceof TimeoutFailure) {
      return `The worker answering this message stopped responding (no heartbeat for ${HEARTBEAT_TIMEOUT_SECONDS} s)`;
    }
    if (err.cause instanceof ApplicationFailure) return err.cause.message;
    return err.cause?.message ?? err.message;
  }
  return (err as Error).message ?? String(err);
}

export async function chatSession(input: ChatSessionInput): Promise<void> {
  // A turn runs a sandbox: it takes a worker run slot on the sandbox queue, as a run does.
  const turns = proxyActivities<ChatActivities>({
    taskQueue: AGENT_SANDBOX_TASK_QUEUE,
    ...(input.orgId ? { priority: { fairnessKey: input.orgId } } : {}),
    startToCloseTimeout: `${input.turnTimeoutSeconds + 120} seconds`,
    heartbeatTimeout: `${HEARTBEAT_TIMEOUT_SECONDS} seconds`,
    retry: EXECUTE_AGENT_RETRY,
  });
  const records = proxyActivities<ChatActivities>({ startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 20, maximumInterval: '10 seconds' } });
  let busy = false;
  setHandler(chatMessageUpdate, async ({ messageId }) => {
    // One turn at a time: the next message's conversation includes this reply. A loop, since
    // every handler waiting on `!busy` wakes in the same pass.
    while (busy) await condition(() => !busy);
    busy = true;
    try {
      return await turns.chatTurn(input.sessionId, messageId);
    } catch (err) {
      return await records.failChatTurn(input.sessionId, messageId, describe(err));
    } finally {
      busy = false;
    }
  });
  await condition(() => workflowInfo().continueAsNewSuggested && !busy);
  await condition(allHandlersFinished);
  await continueAsNew<typeof chatSession>(input);
}
