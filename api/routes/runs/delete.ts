import { problem } from '../../../shared/errors.ts';
import { isTerminal } from '../../../shared/runs/model.ts';
import { defineRoute } from '../../route.ts';
import { findVisibleRun, runIdParam } from '../../resources/runs.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'delete',
  path: '/api/runs/:id',
  operationId: 'deleteRun',
  summary: 'Delete a finished run and its logs',
  description: 'A run still pending or running is 409 `run_not_terminal`: cancel it first.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'runs:delete',
  params: runIdParam,
  responses: { 204: { description: 'Deleted' } },
  async handler(ctx, { params }) {
    const run = await findVisibleRun(ctx, params.id);
    if (!isTerminal(run.status)) throw problem('run_not_terminal', `The run is ${run.status}; cancel it first`);
    await ctx.services.knex('runs').where({ id: run.id, org_id: run.org_id }).delete();
    ctx.status = 204;
  },
});
