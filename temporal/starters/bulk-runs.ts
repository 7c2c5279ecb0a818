// A bulk cancel or replay job (shared/runs/bulk.ts): bulkRuns on `platform` under `bulk:<job id>`,
// started with the job. Each job has an id of its own, so the default reuse policy never meets
// an earlier one.
import type { Client } from '@temporalio/client';
import { PLATFORM_TASK_QUEUE } from '../contract/queues.ts';
import type { BulkRunsWorkflow } from '../contract/workflows.ts';

export function bulkWorkflowId(jobId: string): string {
  return `bulk:${jobId}`;
}

export function startBulkRunsWorkflow(workflows: Client, jobId: string) {
  return workflows.workflow.start<BulkRunsWorkflow>('bulkRuns', {
    taskQueue: PLATFORM_TASK_QUEUE,
    workflowId: bulkWorkflowId(jobId),
    args: [{ jobId }],
  });
}
