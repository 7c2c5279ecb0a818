// A durable file and an upload (SPEC 4.8, DESIGN.md 7): their rows, DTOs and response schemas,
// and the bytes an organization holds against ORG_STORAGE_QUOTA_BYTES. The API serves files
// and uploads; the worker writes a run's input and output files (activities/run-files.ts).
import type { Knex } from 'knex';
import { type OwnerColumns, type RunRow, runDto, runSchema } from '../runs/model.ts';
import { fileExpiresAt } from './expiry.ts';

export interface FileRow extends OwnerColumns {
  id: string;
  run_id: string | null;
  origin: 'input' | 'output';
  field: string | null;
  name: string;
  content_type: string;
  /** bigint: pg hands it back as a string. */
  size: string | number;
  sha256: string;
  storage_key: string;
  kept: boolean;
  expires_at: Date | null;
  created_at: Date;
}

export function fileDto(row: FileRow) {
  return {
    object: 'file' as const,
    id: row.id,
    name: row.name,
    contentType: row.content_type,
    size: Number(row.size),
    sha256: row.sha256,
    runId: row.run_id,
    kept: row.kept,
    expiresAt: row.expires_at ? row.expires_at.toISOString() : null,
    createdAt: row.created_at.toISOString(),
  };
}

export const fileSchema = {
  type: 'object',
  required: ['object', 'id', 'name', 'contentType', 'size', 'sha256', 'runId', 'kept', 'expiresAt', 'createdAt'],
  properties: {
    object: { const: 'file' },
    id: { type: 'string', pattern: '^file_' },
    name: { type: 'string' },
    contentType: { type: 'string', description: 'As declared by the upload, or as the run wrote it' },
    size: { type: 'integer', minimum: 0 },
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: "Hex SHA-256 of the bytes; also the content's ETag" },
    runId: { type: ['string', 'null'], description: 'The run the file is an input or output of (null once that run is deleted)' },
    kept: { type: 'boolean', description: 'Kept files never expire' },
    expiresAt: { type: ['string', 'null'], format: 'date-time', description: 'When an unkept file is deleted (7 days after creation); null once kept' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

/** The columns a new file of `run` takes from it: owned as the run is, on one side of it, unkept. */
export function runFileColumns(run: RunRow, origin: FileRow['origin']) {
  return {
    org_id: run.org_id,
    space_id: run.space_id,
    actor_type: run.actor_type,
    actor_id: run.actor_id,
    user_id: run.user_id,
    end_user_id: run.end_user_id,
    run_id: run.id,
    origin,
    expires_at: fileExpiresAt(),
  };
}

/** A file as a run lists it: which side of the run it is on, and for an input, its field. */
export function runFileDto(row: FileRow) {
  return { ...fileDto(row), origin: row.origin, field: row.field };
}

export const runFileSchema = {
  ...fileSchema,
  required: [...fileSchema.required, 'origin', 'field'],
  properties: {
    ...fileSchema.properties,
    origin: { enum: ['input', 'output'], description: 'Given to the run as input, or written by it under /workspace/output' },
    field: { type: ['string', 'null'], description: 'The input property the file was given for; null for outputs' },
  },
} as const;

/** The files of a run, inputs first, each side by name. */
export function filesOfRun(knex: Knex, runId: string): Promise<FileRow[]> {
  return knex<FileRow>('files')
    .where({ run_id: runId })
    .orderBy([{ column: 'origin' }, { column: 'name' }, { column: 'id' }]);
}

/** One run as a single-run read shows it (GET /api/runs/{id}, MCP `get_run`): with its files. SSE frames carry the run alone. */
export async function runWithFiles(knex: Knex, run: Parameters<typeof runDto>[0] & { has_files?: boolean }) {
  const files = run.has_files === false ? [] : await filesOfRun(knex, run.id);
  return { ...runDto(run), files: files.map(runFileDto) };
}

export const runWithFilesSchema = {
  ...runSchema,
  required: [...runSchema.required, 'files'],
  properties: {
    ...runSchema.properties,
    files: { type: 'array', items: runFileSchema, description: 'Its input files, then the files it wrote (read their bytes at /api/files/{id}/content)' },
  },
};

/** A declared file waiting for its bytes at its upload URL, then for a run input to take it. */
export interface UploadRow extends OwnerColumns {
  id: string;
  name: string;
  content_type: string;
  /** bigint: pg hands it back as a string. */
  size: string | number;
  token_hash: string;
  /** Where the bytes are once completed (the successful PUT's own key). */
  storage_key: string;
  sha256: string | null;
  completed_at: Date | null;
  expires_at: Date;
  created_at: Date;
}

export function uploadDto(row: UploadRow) {
  return {
    object: 'upload' as const,
    id: row.id,
    name: row.name,
    contentType: row.content_type,
    size: Number(row.size),
    completed: row.completed_at !== null,
    sha256: row.sha256,
    expiresAt: row.expires_at.toISOString(),
    createdAt: row.created_at.toISOString(),
  };
}

export const uploadSchema = {
  type: 'object',
  required: ['object', 'id', 'name', 'contentType', 'size', 'completed', 'sha256', 'expiresAt', 'createdAt'],
  properties: {
    object: { const: 'upload' },
    id: { type: 'string', pattern: '^upl_' },
    name: { type: 'string' },
    contentType: { type: 'string' },
    size: { type: 'integer', minimum: 1 },
    completed: { type: 'boolean', description: 'Whether the bytes were received' },
    sha256: { type: ['string', 'null'], description: 'Hex SHA-256 of the bytes, once completed' },
    expiresAt: { type: 'string', format: 'date-time', description: 'When the upload URL stops working and an unused upload lapses' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

/**
 * Bytes the organization holds: its files (bytes shared by several file rows counted once) and
 * its unexpired uploads that no file took yet.
 */
export async function orgBytesInUse(knex: Knex, orgId: string): Promise<number> {
  const { rows } = await knex.raw<{ rows: { used: string }[] }>(
    `select
       (select coalesce(sum(size), 0) from (select distinct on (storage_key) size from files where org_id = :orgId) f)
     + (select coalesce(sum(u.size), 0) from uploads u
         where u.org_id = :orgId and u.expires_at > now()
           and not exists (select 1 from files f where f.storage_key = u.storage_key)) as used`,
    { orgId },
  );
  return Number(rows[0].used);
}
