// Retention of files (DESIGN.md 7): a file nobody kept expires seven days after it was created
// (`files.expires_at`); `POST /api/files/{id}/keep` clears the expiry. The hourly
// `sweep-expired-files` Temporal Schedule (shared/files/sweep-schedule.ts) deletes what expired.
import type { Knex } from 'knex';

export const FILE_TTL_DAYS = 7;
export const FILE_TTL_MS = FILE_TTL_DAYS * 24 * 60 * 60 * 1000;

/** How long an upload URL is good for, and an unused upload lives. */
export const UPLOAD_TTL_MS = 60 * 60 * 1000;

/** `expires_at` of a new, unkept file created at `createdAt`. */
export function fileExpiresAt(createdAt: Date = new Date()): Date {
  return new Date(createdAt.getTime() + FILE_TTL_MS);
}

/**
 * Of `keys`, those no other file row (outside `removing`) nor any upload that is not itself
 * going away still stores its bytes under: a run input given a `file_` id may share the
 * bytes of the file it came from, and a file made from an upload keeps the upload's key.
 */
export async function unreferencedKeys(trx: Knex | Knex.Transaction, keys: string[], removing: { files?: string[]; uploads?: string[] }): Promise<string[]> {
  if (!keys.length) return [];
  const files = trx('files').whereIn('storage_key', keys);
  if (removing.files?.length) files.whereNotIn('id', removing.files);
  const uploads = trx('uploads').whereIn('storage_key', keys);
  if (removing.uploads?.length) uploads.whereNotIn('id', removing.uploads);
  const used = new Set<string>([...(await files.pluck('storage_key')), ...(await uploads.pluck('storage_key'))]);
  return [...new Set(keys)].filter((k) => !used.has(k));
}
