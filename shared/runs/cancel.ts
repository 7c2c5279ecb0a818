// Cancelling a run (POST /api/runs/{id}/cancel and bulk cancel jobs): its workflow is
// cancelled (the sandbox is killed, finalizeRun writes `cancelled`), or, when no workflow stands
// behind it (it never got queued), it ends `cancelled` here. Safe to repeat.
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import { problem } from '../errors.ts';
import { notifyRunEvent } from './events.ts';
import { isTerminal, LIVE_STATUSES, type RunRow } from './model.ts';

/** 409 `run_not_cancellable` once the run ended; otherwise asks for its cancellation. */
export async function requestRunCancel(knex: Knex, workflows: Client, run: Pick<RunRow, 'id' | 'org_id' | 'space_id' | 'status'>): Promise<void> {
  if (isTerminal(run.status)) throw problem('run_not_cancellable', `The run already ended ${run.status}`);
  // Recorded before the workflow hears it: from here on its executeAgent does not end the run
  // `success` itself (it learns of the cancel only with its next heartbeat), runAgent decides.
  await knex('runs').where({ id: run.id }).whereIn('status', LIVE_STATUSES).update({ cancel_requested_at: knex.fn.now() });
  try {
    await workflows.workflow.getHandle(run.id).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    const [row] = await knex('runs')
      .where({ id: run.id })
      .whereIn('status', LIVE_STATUSES)
      .update({ status: 'cancelled', error: 'The run was cancelled', finished_at: knex.fn.now() })
      .returning('*');
    if (!row) return;
    await knex('pending_outputs').where({ run_id: run.id }).delete(); // a remote result refused as the workflow was gone
    await notifyRunEvent(knex, { kind: 'status', runId: run.id, orgId: run.org_id, spaceId: run.space_id, status: 'cancelled' });
  }
}
