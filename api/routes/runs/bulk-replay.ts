import type { BulkFilter } from '../../../shared/runs/bulk.ts';
import { bulkJobSchema } from '../../../shared/runs/bulk-model.ts';
import { defineRoute } from '../../route.ts';
import { bulkBodySchema, bulkDescription, createBulkJob } from './_bulk.ts';

export default defineRoute<{ filter: BulkFilter }>({
  method: 'post',
  path: '/api/runs/bulk/replay',
  operationId: 'bulkReplayRuns',
  summary: 'Launch a new run for every run a filter matches (a bulk job)',
  description: bulkDescription(
    "Each new run has the same agent version and input as the run it replays and is launched by the caller, against the organization's " +
      'run limits: a launch refused by `per_org_global_rate_per_min` or `max_concurrent_per_org` waits as long as the limit says ' +
      'and is tried again (after 30 minutes without progress it counts as failed). An input that no longer validates, a missing ' +
      'connection or a vanished version counts as failed, with its problem code in `failures`.',
  ),
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'agents:run',
  rateLimit: { points: 20, duration: 60, by: 'identity' },
  body: bulkBodySchema,
  responses: { 202: { description: 'The job, queued', schema: bulkJobSchema } },
  async handler(ctx, { body }) {
    ctx.status = 202;
    ctx.body = await createBulkJob(ctx, 'replay', body.filter);
  },
});
