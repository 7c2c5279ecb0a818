import { RUN_STATUSES } from '../../../shared/runs/model.ts';
import { limitFrom, offsetQuery } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { respondWithRunPage, runListResponse, visibleRuns } from '../../resources/runs.ts';

export default defineRoute<unknown, { limit?: number; offset: number; status?: string; packageId?: string }>({
  method: 'get',
  path: '/api/runs',
  operationId: 'listRuns',
  summary: 'Runs of the space, newest first',
  description: 'Offset pagination (default 20, max 100) with Link headers. Without `runs:read-all`, only the runs the caller launched.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'runs:read',
  query: {
    type: 'object',
    properties: {
      ...offsetQuery,
      status: { enum: [...RUN_STATUSES] },
      packageId: { type: 'string', pattern: '^@[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*$' },
    },
  },
  responses: { 200: { description: 'Page of runs', schema: runListResponse } },
  async handler(ctx, { query }) {
    const limit = limitFrom(query.limit, 20, 100);
    const q = visibleRuns(ctx);
    if (query.status) q.where('r.status', query.status);
    if (query.packageId) {
      const [scope, name] = query.packageId.split('/');
      q.where({ 'p.scope': scope, 'p.name': name });
    }
    await respondWithRunPage(ctx, q, limit, query.offset);
  },
});
