// A chat session's workflow (DESIGN.md 7, shared/chat/README.md): `chat:<chs id>` on `agent-runs`,
// started with the session and again should it be gone. USE_EXISTING: a start that finds it
// running (two messages racing to restart it) joins it. The organization is the fairness key of
// its turns' sandbox slots, as for runs.
import type { Client } from '@temporalio/client';
import type { ChatSessionRow } from '../../shared/chat/model.ts';
import { AGENT_RUNS_TASK_QUEUE } from '../contract/queues.ts';
import type { ChatSessionWorkflow } from '../contract/workflows.ts';
import { OrgIdKey, PackageIdKey, SpaceIdKey } from '../search-attributes.ts';

export function chatWorkflowId(sessionId: string): string {
  return `chat:${sessionId}`;
}

/** `packageId`: the agent's '@scope/name'. */
export function startChatSessionWorkflow(
  workflows: Client,
  session: Pick<ChatSessionRow, 'id' | 'org_id' | 'space_id' | 'turn_timeout_seconds'>,
  packageId: string,
) {
  return workflows.workflow.start<ChatSessionWorkflow>('chatSession', {
    taskQueue: AGENT_RUNS_TASK_QUEUE,
    workflowId: chatWorkflowId(session.id),
    workflowIdConflictPolicy: 'USE_EXISTING',
    priority: { fairnessKey: session.org_id },
    args: [{ sessionId: session.id, turnTimeoutSeconds: session.turn_timeout_seconds, orgId: session.org_id }],
    typedSearchAttributes: [
      { key: OrgIdKey, value: session.org_id },
      { key: SpaceIdKey, value: session.space_id },
      { key: PackageIdKey, value: packageId },
    ],
  });
}
