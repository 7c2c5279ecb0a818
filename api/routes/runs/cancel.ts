import { WorkflowNotFoundError } from '@temporalio/client';
import { problem } from '../../../shared/errors.ts';
import { notifyRunEvent } from '../../../shared/runs/events.ts';
import { isTerminal, runDto, runSchema } from '../../../shared/runs/model.ts';
import { defineRoute } from '../../route.ts';
import { findVisibleRun, runIdParam } from './_visible.ts';

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
    const { knex, workflows } = ctx.services;
    const run = await findVisibleRun(ctx, params.id);
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
    ctx.status = 202;
    ctx.body = runDto(await findVisibleRun(ctx, params.id));
  },
});
