// Bulk run jobs over HTTP (shared/runs/bulk.ts): the filter's schema, creating a job and starting
// its `bulkRuns` workflow, and reading one. A job belongs to the caller's space: readable by
// whoever could read the runs of its creator (its creator, or runs:read-all holders); elsewhere 404.
import { problem } from '../../../shared/errors.ts';
import { RUN_STATUSES } from '../../../shared/runs/model.ts';
import {
  BULK_MAX_IDS,
  BULK_MAX_RUNS,
  type BulkFilter,
  type BulkJobRow,
  type BulkKind,
  bulkFailures,
  bulkJobDto,
  newBulkJobId,
} from '../../../shared/runs/bulk.ts';
import type { AppContext } from '../../context.ts';
import type { JsonSchema } from '../../route.ts';
import { startBulkRunsWorkflow } from '../../../temporal/starters/bulk-runs.ts';
import { dateTime } from '../../schemas.ts';
import { canReadRun } from '../../../shared/runs/visibility.ts';
import { launcherOf } from '../../resources/launch.ts';
import { runAudience } from '../../resources/runs.ts';

const statusEnum = { type: 'string', enum: [...RUN_STATUSES] } as const;

export const bulkFilterSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description: `Runs the job covers: all criteria must hold. At least one is required. Without \`ids\` at most ${BULK_MAX_RUNS} runs (oldest first; \`truncated\` says when more matched).`,
  properties: {
    status: { oneOf: [statusEnum, { type: 'array', minItems: 1, uniqueItems: true, items: statusEnum }] },
    packageId: { type: 'string', pattern: '^@[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*$', description: "The agent, '@scope/name'" },
    createdAfter: { ...dateTime, description: 'Runs created strictly after this instant' },
    createdBefore: { ...dateTime, description: 'Runs created strictly before this instant' },
    ids: {
      type: 'array',
      minItems: 1,
      maxItems: BULK_MAX_IDS,
      uniqueItems: true,
      items: { type: 'string', pattern: '^run_[0-9A-Za-z]{1,64}$' },
      description: `Up to ${BULK_MAX_IDS} run ids; one the caller cannot read counts as a failure (\`not_found\`).`,
    },
  },
};

export const bulkBodySchema: JsonSchema = {
  type: 'object',
  required: ['filter'],
  additionalProperties: false,
  properties: { filter: bulkFilterSchema },
};

const counter = { type: 'integer', minimum: 0 } as const;

export const bulkJobSchema: JsonSchema = {
  type: 'object',
  required: ['object', 'id', 'kind', 'status', 'filter', 'spaceId', 'total', 'truncated', 'processed', 'succeeded', 'failed', 'skipped', 'failures', 'createdAt', 'startedAt', 'finishedAt'],
  properties: {
    object: { const: 'bulk_job' },
    id: { type: 'string', pattern: '^bulk_' },
    kind: { enum: ['cancel', 'replay'] },
    status: { enum: ['queued', 'running', 'completed'], description: '`queued` until the filter is evaluated, `running` while pages are processed' },
    filter: bulkFilterSchema,
    spaceId: { type: 'string' },
    total: { type: ['integer', 'null'], description: 'Runs covered; null until the filter is evaluated' },
    truncated: { type: 'boolean', description: `More than ${BULK_MAX_RUNS} runs matched; the oldest ${BULK_MAX_RUNS} are covered` },
    processed: counter,
    succeeded: { ...counter, description: 'cancel: cancellation requested; replay: a new run launched' },
    failed: counter,
    skipped: { ...counter, description: 'cancel: the run had already ended' },
    failures: {
      type: 'array',
      description: 'The first 20 failed runs, with the problem code',
      items: { type: 'object', required: ['runId', 'code', 'detail'], properties: { runId: { type: 'string' }, code: { type: 'string' }, detail: { type: 'string' } } },
    },
    createdAt: dateTime,
    startedAt: { type: ['string', 'null'], format: 'date-time' },
    finishedAt: { type: ['string', 'null'], format: 'date-time' },
  },
};

/** Validates beyond the schema, records the job, and starts its workflow; the job as created. */
export async function createBulkJob(ctx: AppContext, kind: BulkKind, filter: BulkFilter) {
  if (filter.createdAfter && filter.createdBefore && new Date(filter.createdAfter) >= new Date(filter.createdBefore)) {
    const message = 'filter.createdBefore must be later than filter.createdAfter';
    throw problem('validation_failed', { detail: message, errors: [{ field: 'filter.createdBefore', code: 'invalid_value', message }] });
  }
  const { knex, workflows } = ctx.services;
  const audience = runAudience(ctx);
  const launcher = launcherOf(ctx);
  const id = newBulkJobId();
  const [row] = await knex('bulk_jobs')
    .insert({
      id,
      org_id: audience.orgId,
      space_id: audience.spaceId,
      kind,
      filter: JSON.stringify(filter),
      audience: JSON.stringify(audience.only),
      actor_type: launcher.actor.type,
      actor_id: launcher.actor.id,
      user_id: launcher.userId,
      end_user_id: launcher.endUserId ?? null,
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

/** The job when the caller may read it: same organization and space, and its creator's runs visible to the caller. */
export async function findBulkJob(ctx: AppContext, id: string) {
  const audience = runAudience(ctx);
  const { knex } = ctx.services;
  const job = (await knex('bulk_jobs').where({ id, org_id: audience.orgId, space_id: audience.spaceId }).first()) as BulkJobRow | undefined;
  if (!job || !canReadRun(audience, job)) throw problem('not_found', 'No such bulk job');
  return bulkJobDto(job, await bulkFailures(knex, job.id));
}

export const bulkDescription = (what: string) =>
  `${what} Answers 202 with the job; \`GET /api/runs/bulk/{jobId}\` shows its progress. Only runs the caller may read are covered. The job runs as a durable workflow in pages of 50 runs and resumes after a restart.`;
