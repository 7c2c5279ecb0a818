import { bulkJobSchema } from '../../../shared/runs/bulk-model.ts';
import { defineRoute } from '../../route.ts';
import { findBulkJob } from './_bulk.ts';

export default defineRoute<unknown, unknown, { jobId: string }>({
  method: 'get',
  path: '/api/runs/bulk/:jobId',
  operationId: 'getBulkRunJob',
  summary: "A bulk job's progress",
  description: 'Counters are updated after each page. A job of another space or organization, or of a creator whose runs the caller may not read, is 404.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'runs:read',
  rateLimit: { points: 120, duration: 60, by: 'identity' },
  params: { type: 'object', required: ['jobId'], properties: { jobId: { type: 'string', minLength: 1 } } },
  responses: { 200: { description: 'The job', schema: bulkJobSchema } },
  async handler(ctx, { params }) {
    ctx.body = await findBulkJob(ctx, params.jobId);
  },
});
