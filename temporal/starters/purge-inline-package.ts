// An inline run's retention (DESIGN.md 2, SPEC 8.4): purgeInlinePackage on `platform` under
// `purge:<package id>`, started with the run. Each inline run has a package of its own, so the
// default reuse policy never meets an earlier one.
import type { Client } from '@temporalio/client';
import { PLATFORM_TASK_QUEUE } from '../contract/queues.ts';
import type { PurgeInlinePackageInput, PurgeInlinePackageWorkflow } from '../contract/workflows.ts';

export function startPurgeInlinePackageWorkflow(workflows: Client, input: PurgeInlinePackageInput) {
  return workflows.workflow.start<PurgeInlinePackageWorkflow>('purgeInlinePackage', {
    taskQueue: PLATFORM_TASK_QUEUE,
    workflowId: `purge:${input.packageId}`,
    args: [input],
  });
}
