// How a bulk run job looks to API clients (`/api/runs/bulk/*`): its response schema beside the
// DTO that fills it. The filter's schema lives here too: a job shows the filter it was created
// with. The rows and the job's operations are bulk.ts's.
import { BULK_MAX_IDS, BULK_MAX_RUNS, type BulkFailure, type BulkJobRow } from './bulk.ts';
import { RUN_STATUSES } from './model.ts';
import { type JsonSchema, dateTime } from '../json-schema.ts';

const statusEnum = { type: 'string', enum: [...RUN_STATUSES] } as const;

export const bulkFilterSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description:
    `Runs the job covers: all criteria must hold. At least one is required. Without \`ids\` at most ${BULK_MAX_RUNS} runs (oldest ` +
    `first; \`truncated\` says when more matched).`,
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

const counter = { type: 'integer', minimum: 0 } as const;

export const bulkJobSchema: JsonSchema = {
  type: 'object',
  required: [
    'object',
    'id',
    'kind',
    'status',
    'filter',
    'spaceId',
    'total',
    'truncated',
    'processed',
    'succeeded',
    'failed',
    'skipped',
    'failures',
    'createdAt',
    'startedAt',
    'finishedAt',
  ],
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
      items: {
        type: 'object',
        required: ['runId', 'code', 'detail'],
        properties: { runId: { type: 'string' }, code: { type: 'string' }, detail: { type: 'string' } },
      },
    },
    createdAt: dateTime,
    startedAt: { type: ['string', 'null'], format: 'date-time' },
    finishedAt: { type: ['string', 'null'], format: 'date-time' },
  },
};

export function bulkJobDto(job: BulkJobRow, failures: BulkFailure[] = []) {
  return {
    object: 'bulk_job' as const,
    id: job.id,
    kind: job.kind,
    status: job.status,
    filter: job.filter,
    spaceId: job.space_id,
    total: job.total,
    truncated: job.truncated,
    processed: job.processed,
    succeeded: job.succeeded,
    failed: job.failed,
    skipped: job.skipped,
    failures,
    createdAt: job.created_at.toISOString(),
    startedAt: job.started_at?.toISOString() ?? null,
    finishedAt: job.finished_at?.toISOString() ?? null,
  };
}
