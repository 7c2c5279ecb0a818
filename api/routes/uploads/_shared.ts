// Uploads (SPEC 4.8, DESIGN.md 7): a declared file waiting for its bytes at a one-hour upload
// URL, then for a run input to take it. Rows carry owner columns as runs do, and are visible
// as runs are (api/resources/runs.ts). The row and its wire shape are shared/files/model.ts.
import { problem } from '../../../shared/errors.ts';
import type { UploadRow } from '../../../shared/files/model.ts';
import type { AppContext } from '../../context.ts';
import { canReadRun } from '../../../shared/runs/visibility.ts';
import { runAudience } from '../../resources/runs.ts';

const CTL = '\\u0000-\\u001F\\u007F';
/** A file name, not a path: no `/`, `\`, control characters, and not `.` or `..` (no lookahead, for generators). */
export const fileNameSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: `^([^/\\\\.${CTL}][^/\\\\${CTL}]*|\\.[^/\\\\.${CTL}][^/\\\\${CTL}]*|\\.\\.[^/\\\\${CTL}]+)$`,
  description: 'A file name without path separators (no `/` or `\\`), not `.` or `..`',
} as const;

const TOKEN = '[A-Za-z0-9!#$&^_.+-]{1,127}';
/** `type/subtype`, optionally with parameters (`text/plain; charset=utf-8`). */
export const mimeTypeSchema = {
  type: 'string',
  maxLength: 255,
  pattern: `^${TOKEN}/${TOKEN}( *; *${TOKEN}=(${TOKEN}|"[^"${CTL}]*"))*$`,
  description: 'A MIME type, e.g. `application/pdf` or `text/plain; charset=utf-8`',
} as const;

/** The upload with this id as the caller may see it (like a run), or 404. */
export async function findVisibleUpload(ctx: AppContext, id: string): Promise<UploadRow> {
  const row = await ctx.services.knex<UploadRow>('uploads').where({ id }).first();
  if (!row || !canReadRun(runAudience(ctx), row)) throw problem('not_found', 'No such upload');
  return row;
}

/**
 * Bytes the organization holds or has reserved: every file row (until the expiry sweep deletes
 * it), plus uploads not yet expired (pending ones reserve their declared size) whose bytes no
 * file row has taken over.
 */
export function formatBytes(n: number): string {
  const MiB = 1024 * 1024;
  if (n >= MiB && n % MiB === 0) return `${n / MiB} MiB (${n} bytes)`;
  return `${n} bytes`;
}
