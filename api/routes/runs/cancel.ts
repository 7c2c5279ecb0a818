import { requestRunCancel } from '../../../shared/runs/cancel.ts';
import { runDto, runSchema } from '../../../shared/runs/model.ts';
import type { AppContext } from '../../context.ts';
import { defineRoute } from '../../route.ts';
import { findVisibleRun, runIdParam } from './_visible.ts';

/**
 * Cancels a run the caller may read (404 otherwise; 409 `run_not_cancellable` once it ended):
 * its workflow is cancelled, or without one it ends `cancelled` here. Answers the run as it is now.
 */
export async function cancelRun(ctx: AppContext, runId: string) {
  const { knex, workflows } = ctx.services;
  const run = await findVisibleRun(ctx, runId);
  await requestRunCancel(knex, workflows, run);
  return runDto(await findVisibleRun(ctx, runId));
}

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'post',
  path: '/api/runs/:id/cancel',
  operationId: 'cancelRun',
  summary: 'Cancel a run: its sandbox is killed and it ends `cancelled`',
  description: '202 with the run as it is now; the terminal status follows (long-poll with `wait`). A terminal run is 409 `run_not_cancellable`.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'runs:cancel',
  params: runIdParam,
  responses: { 202: { description: 'Cancellation requested', schema: runSchema } },
  async handler(ctx, { params }) {
    ctx.status = 202;
    ctx.body = await cancelRun(ctx, params.id);
  },
});
