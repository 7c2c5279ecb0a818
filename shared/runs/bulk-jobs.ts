// Creating and reading a bulk job (bulk.ts): what the API's bulk routes and the console's bulk
// cancel share, so a job made from either door is the same job.
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { startBulkRunsWorkflow } from '../../temporal/starters/bulk-runs.ts';
import { problem } from '../errors.ts';
import { type BulkFilter, type BulkJobRow, type BulkKind, bulkFailures, newBulkJobId } from './bulk.ts';
import { bulkJobDto } from './bulk-model.ts';
import type { RunRow } from './model.ts';
import { canReadRun, type RunAudience } from './visibility.ts';

/** Who creates a job: its runs are those this audience reads; replays launch as this actor. */
export interface BulkJobCreator {
  audience: RunAudience;
  actor: { type: RunRow['actor_type']; id: string };
  userId: string | null;
  endUserId?: string | null;
}

/**
 * Checks what the filter's schema cannot (400 naming the field), records the job and starts its
 * workflow (503 when Temporal cannot take it; the job is then removed); the job as created. The
 * API's bulk routes and the console's bulk cancel both create jobs here.
 */
export async function createBulkJob(knex: Knex, workflows: Client, creator: BulkJobCreator, kind: BulkKind, filter: BulkFilter) {
  if (filter.createdAfter && filter.createdBefore && new Date(filter.createdAfter) >= new Date(filter.createdBefore)) {
    const message = 'filter.createdBefore must be later than filter.createdAfter';
    throw problem('validation_failed', { detail: message, errors: [{ field: 'filter.createdBefore', code: 'invalid_value', message }] });
  }
  const { audience } = creator;
  const id = newBulkJobId();
  const [row] = await knex('bulk_jobs')
    .insert({
      id,
      org_id: audience.orgId,
      space_id: audience.spaceId,
      kind,
      filter: JSON.stringify(filter),
      audience: JSON.stringify(audience.only),
      actor_type: creator.actor.type,
      actor_id: creator.actor.id,
      user_id: creator.userId,
      end_user_id: creator.endUserId ?? null,
    })
    .returning('*');
  try {
    await startBulkRunsWorkflow(workflows, id);
  } catch {
    await knex('bulk_jobs').where({ id }).delete();
    throw problem('service_unavailable', 'The job could not be queued: the workflow service is unavailable');
  }
  return bulkJobDto(row as BulkJobRow);
}

/** The job with its first failures when `audience` may read it (its space, and its creator's runs visible); else undefined. */
export async function readBulkJob(knex: Knex, audience: RunAudience, id: string) {
  const job = (await knex('bulk_jobs').where({ id, org_id: audience.orgId, space_id: audience.spaceId }).first()) as BulkJobRow | undefined;
  if (!job || !canReadRun(audience, job)) return undefined;
  return bulkJobDto(job, await bulkFailures(knex, job.id));
}
