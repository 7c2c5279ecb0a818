// A run's workflow (DESIGN.md 2): runAgent, or remoteRun for a run executed outside the service.
// Both on `agent-runs` under the run's id, with the organization as fairness key (its activities
// inherit it: when runs wait for sandbox slots, each organization gets its share of them in turn
// instead of queueing behind another's burst, DESIGN.md 8) and the search attributes operators
// filter runs by. The default reuse policy: a run id is started once (shared/runs/launch.ts
// starts it only for a run still `pending` with no workflow).
import type { Client, WorkflowStartOptions } from '@temporalio/client';
import type { RunRow } from '../../shared/runs/model.ts';
import { AGENT_RUNS_TASK_QUEUE } from '../contract/queues.ts';
import type { RemoteRunWorkflow, RunAgentWorkflow } from '../contract/workflows.ts';
import { OrgIdKey, PackageIdKey, RunStatusKey, SpaceIdKey } from '../search-attributes.ts';

type RunStart = Pick<RunRow, 'id' | 'org_id' | 'space_id' | 'timeout_seconds'>;

/** `packageId`: the agent's '@scope/name'. */
function runOptions(run: RunStart, packageId: string): Omit<WorkflowStartOptions, 'args'> {
  return {
    taskQueue: AGENT_RUNS_TASK_QUEUE,
    workflowId: run.id,
    priority: { fairnessKey: run.org_id },
    typedSearchAttributes: [
      { key: OrgIdKey, value: run.org_id },
      { key: SpaceIdKey, value: run.space_id },
      { key: PackageIdKey, value: packageId },
      { key: RunStatusKey, value: 'pending' },
    ],
  };
}

export function startRunAgentWorkflow(workflows: Client, run: RunStart, packageId: string) {
  return workflows.workflow.start<RunAgentWorkflow>('runAgent', {
    ...runOptions(run, packageId),
    args: [{ runId: run.id, timeoutSeconds: run.timeout_seconds, orgId: run.org_id }],
  });
}

export function startRemoteRunWorkflow(workflows: Client, run: RunStart & { sink_expires_at: Date }, packageId: string) {
  return workflows.workflow.start<RemoteRunWorkflow>('remoteRun', {
    ...runOptions(run, packageId),
    args: [{ runId: run.id, timeoutSeconds: run.timeout_seconds, sinkExpiresAt: run.sink_expires_at.toISOString() }],
  });
}
