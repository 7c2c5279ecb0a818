// Expiry of files (DESIGN.md 7): unkept files whose `expires_at` passed, and uploads whose
// upload URL lapsed (pending ones, and completed ones no run took), are deleted in batches:
// bytes first, then rows, in one transaction that holds the rows (FOR UPDATE SKIP LOCKED), so
// a concurrent keep or delete waits or is skipped and a crash leaves rows to sweep again.
// Idempotent: deleting missing bytes or rows is not an error, and a rerun picks up what is left.
// Also the backstop of workspace checkpoints (sandbox/checkpoints.ts): those of runs that ended
// (finalizeRun deletes them; a delete may fail, a worker may be lost at the end).
import type { Knex } from 'knex';
import { UPLOAD_TTL_MS, unreferencedKeys } from '../shared/files/expiry.ts';
import { DiskStorage } from '../shared/files/disk-storage.ts';
import type { ActivityDeps } from './deps.ts';
import { sweepWorkspaceCheckpoints } from './sandbox/checkpoints.ts';

/** How long a partial upload may sit beyond the upload URL's hour before it is taken for debris. */
const PARTIAL_GRACE_MS = 60 * 60 * 1000;

export const SWEEP_BATCH = 200;

export interface SweepBatchResult {
  files: number;
  uploads: number;
  /** Runs whose leftover workspace checkpoints were deleted. */
  checkpoints?: number;
  /** A full batch of either: there may be more. */
  more: boolean;
}

export function createSweepExpiredFilesActivities(deps: Pick<ActivityDeps, 'knex' | 'files'>) {
  const { knex, files } = deps;

  /**
   * Deletes one batch of expired rows of `table` (unkept files, or uploads), then the bytes no
   * other row still uses; rows locked by a concurrent sweep are skipped.
   */
  async function sweep(trx: Knex.Transaction, table: 'files' | 'uploads', limit: number): Promise<number> {
    const expired = trx(table).where('expires_at', '<=', trx.fn.now());
    if (table === 'files') expired.where({ kept: false });
    const rows: { id: string; storage_key: string }[] = await expired.orderBy('expires_at').limit(limit).forUpdate().skipLocked().select('id', 'storage_key');
    if (!rows.length) return 0;
    const ids = rows.map((r) => r.id);
    for (const key of await unreferencedKeys(
      trx,
      rows.map((r) => r.storage_key),
      { [table]: ids },
    ))
      await files.delete(key);
    await trx(table).whereIn('id', ids).delete();
    return rows.length;
  }

  return {
    /** One batch of each; the workflow calls it until `more` is false. */
    async sweepExpiredFilesBatch(input: { limit?: number } = {}): Promise<SweepBatchResult> {
      const limit = input.limit ?? SWEEP_BATCH;
      const removedFiles = await knex.transaction((trx) => sweep(trx, 'files', limit));
      const removedUploads = await knex.transaction((trx) => sweep(trx, 'uploads', limit));
      // Bytes of uploads cut off by a crash: older than any upload can take (an upload URL lives an hour).
      if (files instanceof DiskStorage) await files.removeStalePartials(UPLOAD_TTL_MS + PARTIAL_GRACE_MS);
      const checkpoints = await sweepWorkspaceCheckpoints(knex, files);
      return { files: removedFiles, uploads: removedUploads, checkpoints, more: removedFiles === limit || removedUploads === limit };
    },
  };
}
