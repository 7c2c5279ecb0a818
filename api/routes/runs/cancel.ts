import { WorkflowNotFoundError } from '@temporalio/client';
import { problem } from '../../../shared/errors.ts';
import { notifyRunEvent } from '../../../shared/runs/events.ts';
import { isTerminal, runDto, runSchema } from '../../../shared/runs/model.ts';
import { type AppContext, defineRoute } from '../../route.ts';
import { findVisibleRun, runIdParam } from './_visible.ts';

/**
 * Cancels a run the caller may read (404 otherwise; 409 `run_not_cancellable` once it ended):
 * its workflow is cancelled, or without one it ends `cancelled` here. Answers the run as it is now.
 */
export async function cancelRun(ctx: AppContext, runId: string) {
  const { knex, workflows } = ctx.services;
  const run = await findVisibleRun(ctx, runId);
  if (isTerminal(run.status)) throw problem('run_not_cancellable', `The run already ended ${run.status}`);
  try {
    await workflows.workflow.getHandle(run.id).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    // No workflow behind it (it never got queued): end it here.
    const [row] = await knex('runs')
      .where({ id: run.id })
      .whereIn('status', ['pending', 'running'])
      .update({ status: 'cancelled', error: 'The run was cancelled', finished_at: knex.fn.now() })
      .returning('*');
    if (row) await notifyRunEvent(knex, { kind: 'status', runId: run.id, orgId: run.org_id, spaceId: run.space_id, status: 'cancelled' });
  }
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
