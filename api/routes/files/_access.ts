// Files (SPEC 4.8, DESIGN.md 7): who may read them, and their DTO. Visible as runs are
// (api/resources/runs.ts): with `runs:read-all` every file of the space, otherwise the
// caller's own (its API key's, its user's, or its impersonated end-user's); anything else is 404.
// The row and its DTO are in shared/files/model.ts (the worker writes files too).
import type { Knex } from 'knex';
import { problem } from '../../../shared/errors.ts';
import type { FileRow } from '../../../shared/files/model.ts';
import type { AppContext } from '../../context.ts';
import { runAudience } from '../../resources/runs.ts';

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
