import type { BulkFilter } from '../../../shared/runs/bulk.ts';
import { bulkJobSchema } from '../../../shared/runs/bulk-model.ts';
import { defineRoute } from '../../route.ts';
import { bulkBodySchema, bulkDescription, createBulkJob } from './_bulk.ts';

export default defineRoute<{ filter: BulkFilter }>({
  method: 'post',
  path: '/api/runs/bulk/cancel',
  operationId: 'bulkCancelRuns',
  summary: 'Cancel every run a filter matches (a bulk job)',
  description: bulkDescription('Each run is cancelled as by `POST /api/runs/{id}/cancel`; a run that already ended is counted in `skipped`.'),
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'runs:cancel',
  rateLimit: { points: 20, duration: 60, by: 'identity' },
  body: bulkBodySchema,
  responses: { 202: { description: 'The job, queued', schema: bulkJobSchema } },
  async handler(ctx, { body }) {
    ctx.status = 202;
    ctx.body = await createBulkJob(ctx, 'cancel', body.filter);
  },
});
