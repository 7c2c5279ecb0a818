// Files (SPEC 4.8, DESIGN.md 7): who may read them, and their DTO. Visible as runs are
// (api/routes/runs/_visible.ts): with `runs:read-all` every file of the space, otherwise the
// caller's own (its API key's, its user's, or its impersonated end-user's); anything else is 404.
import type { Knex } from 'knex';
import { problem } from '../../../shared/errors.ts';
import type { OwnerColumns } from '../../../shared/runs/model.ts';
import type { AppContext } from '../../route.ts';
import { runAudience } from '../runs/_visible.ts';

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
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'Hex SHA-256 of the bytes; also the content\'s ETag' },
    runId: { type: ['string', 'null'], description: 'The run the file is an input or output of (null once that run is deleted)' },
    kept: { type: 'boolean', description: 'Kept files never expire' },
    expiresAt: { type: ['string', 'null'], format: 'date-time', description: 'When an unkept file is deleted (7 days after creation); null once kept' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

export const fileIdParam = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 100 } },
} as const;

/** The caller's visible files of its space (same rule as `visibleRuns`). */
export function visibleFiles(ctx: AppContext): Knex.QueryBuilder<FileRow> {
  const { orgId, spaceId, only } = runAudience(ctx);
  const q = ctx.services.knex<FileRow>('files').where({ org_id: orgId, space_id: spaceId });
  if (only && 'endUserId' in only) q.where('end_user_id', only.endUserId);
  else if (only && 'apiKeyId' in only) q.where({ actor_type: 'api_key', actor_id: only.apiKeyId });
  else if (only) q.where('user_id', only.userId);
  return q;
}

/** The file with this id as the caller may see it, or 404 (also for another space's or owner's). */
export async function findVisibleFile(ctx: AppContext, id: string): Promise<FileRow> {
  const row = await visibleFiles(ctx).where({ id }).first();
  if (!row) throw problem('not_found', 'No such file');
  return row;
}
