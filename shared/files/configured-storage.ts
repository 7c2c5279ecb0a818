// The store a process opens at start (api/server.ts, workers/service-workers.ts). Apart from the
// interface (storage.ts) so that neither store's file imports the other or this choice.
import path from 'node:path';
import type { Config } from '../config.ts';
import { DiskStorage } from './disk-storage.ts';
import type { FileStorage } from './storage.ts';

/** The configured store: S3-compatible when S3_* is set (shared/files/s3-storage.ts), else the disk. */
export async function fileStorage(config: Pick<Config, 'dataDir' | 's3'>): Promise<FileStorage> {
  if (config.s3) {
    const { S3Storage } = await import('./s3-storage.ts');
    return new S3Storage(config.s3);
  }
  return new DiskStorage(path.join(config.dataDir, 'files'));
}
