import { runSchema } from '../../../shared/runs/model.ts';
import { defineRoute } from '../../route.ts';
import { cancelRun, runIdParam } from '../../resources/runs.ts';

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
