// Bulk run jobs over HTTP (shared/runs/bulk.ts): the request body, creating a job and starting
// its `bulkRuns` workflow, and reading one (its wire shape: shared/runs/bulk-model.ts). A job
// belongs to the caller's space: readable by whoever could read the runs of its creator (its
// creator, or runs:read-all holders); elsewhere 404.
import { problem } from '../../../shared/errors.ts';
import type { BulkFilter, BulkKind } from '../../../shared/runs/bulk.ts';
import { createBulkJob as createJob, readBulkJob } from '../../../shared/runs/bulk-jobs.ts';
import { bulkFilterSchema } from '../../../shared/runs/bulk-model.ts';
import type { AppContext } from '../../context.ts';
import type { JsonSchema } from '../../route.ts';
import { launcherOf } from '../../resources/launch.ts';
import { runAudience } from '../../resources/runs.ts';

export const bulkBodySchema: JsonSchema = {
  type: 'object',
  required: ['filter'],
  additionalProperties: false,
  properties: { filter: bulkFilterSchema },
};

/** Records the job and starts its workflow (shared/runs/bulk.ts); the job as created. */
export async function createBulkJob(ctx: AppContext, kind: BulkKind, filter: BulkFilter) {
  const { knex, workflows } = ctx.services;
  return createJob(knex, workflows, { audience: runAudience(ctx), ...launcherOf(ctx) }, kind, filter);
}

/** The job when the caller may read it: same organization and space, and its creator's runs visible to the caller. */
export async function findBulkJob(ctx: AppContext, id: string) {
  const job = await readBulkJob(ctx.services.knex, runAudience(ctx), id);
  if (!job) throw problem('not_found', 'No such bulk job');
  return job;
}

export const bulkDescription = (what: string) =>
  `${what} Answers 202 with the job; \`GET /api/runs/bulk/{jobId}\` shows its progress. Only runs the caller may read are covered. ` +
  `The job runs as a durable workflow in pages of 50 runs and resumes after a restart.`;
