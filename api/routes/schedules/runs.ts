import { problem } from '../../../shared/errors.ts';
import { limitFrom, offsetQuery } from '../../pagination.ts';
import { defineRoute } from '../../route.ts';
import { respondWithRunPage, runListResponse, visibleRuns } from '../../resources/runs.ts';
import { findSchedule } from '../../resources/schedules.ts';
import { scheduleIdParam } from './_shared.ts';

export default defineRoute<unknown, { limit?: number; offset: number }, { id: string }>({
  method: 'get',
  path: '/api/schedules/:id/runs',
  operationId: 'listScheduleRuns',
  summary: 'Runs of one schedule, newest first',
  description:
    'Offset pagination (default 20, max 100) with Link headers. Needs `runs:read` too; the run visibility of `GET /api/runs` ' +
    'applies. Ticks that could not start are `failed` runs.',
  tag: 'Schedules',
  auth: 'any',
  context: 'space',
  scope: 'schedules:read',
  params: scheduleIdParam,
  query: { type: 'object', properties: offsetQuery },
  responses: { 200: { description: 'Page of runs', schema: runListResponse } },
  async handler(ctx, { params, query }) {
    // Runs are read here: the run permission holds as on GET /api/runs.
    if (!ctx.state.tenancy!.scopes.has('runs:read')) throw problem('forbidden', 'Reading the runs of a schedule also needs runs:read');
    const schedule = await findSchedule(ctx, params.id);
    await respondWithRunPage(ctx, visibleRuns(ctx).where('r.schedule_id', schedule.id), limitFrom(query.limit, 20, 100), query.offset);
  },
});
