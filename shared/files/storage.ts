// Where file bytes live (DESIGN.md section 7): one interface, two stores. The local disk under
// `$DATA_DIR/files` by default; S3-compatible object storage when S3_* is set, so API replicas
// and workers on several machines share files. Bytes are written whole or not at all: a partial
// or mismatched upload is never visible under its key.
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../config.ts';
import { pathUnder } from './confine.ts';

/** The bytes sent were not the size declared. Nothing was stored. */
export class SizeMismatchError extends Error {
  readonly expected: number;
  /** Bytes counted before giving up: more than `expected` as soon as one byte too many arrived. */
  readonly received: number;
  constructor(expected: number, received: number) {
    super(`expected ${expected} bytes, received ${received}${received > expected ? ' or more' : ''}`);
    this.name = 'SizeMismatchError';
    this.expected = expected;
    this.received = received;
  }
}

/** No bytes are stored under the key (`get` only; `delete` of a missing key succeeds). */
export class StoredFileMissingError extends Error {
  readonly key: string;
  constructor(key: string) {
    super(`nothing stored under ${key}`);
    this.name = 'StoredFileMissingError';
    this.key = key;
  }
}

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive (the caller keeps it below the stored size). */
  end: number;
}

export interface FileStorage {
  /** Stores exactly `size` bytes from `body` under `key`; anything else throws SizeMismatchError and stores nothing. */
  put(key: string, body: Readable, size: number): Promise<{ sha256: string }>;
  /** The bytes under `key` (a range of them when given); StoredFileMissingError when there are none. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** Removes `key`; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
}

/** Keys are relative paths of our own making: letters, digits, `_ - . /`, no `..`, no leading dot or slash. */
export function assertStorageKey(key: string): void {
  if (!/^[A-Za-z0-9_][A-Za-z0-9_./-]*$/.test(key) || key.includes('..') || key.includes('//') || key.endsWith('/')) {
    throw new Error(`not a storage key: ${key}`);
  }
}

/**
 * Counts and hashes bytes as they pass, failing as soon as more than `size` arrive, and at the
 * end when fewer did. The last chunk is held back until the source has ended and the count is
 * exact, so a consumer never sees all `size` bytes of a body that turns out too long or short:
 * a store that commits on receiving the declared length (an S3 PUT) cannot commit a bad body.
 */
export async function* measured(body: AsyncIterable<Buffer | string>, size: number, digest: { sha256?: string }): AsyncGenerator<Buffer> {
  const hash = createHash('sha256');
  let received = 0;
  let held: Buffer | undefined;
  for await (const piece of body) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
    if (!chunk.length) continue;
    received += chunk.length;
    if (received > size) throw new SizeMismatchError(size, received);
    hash.update(chunk);
    if (held) yield held;
    held = chunk;
  }
  if (received !== size) throw new SizeMismatchError(size, received);
  digest.sha256 = hash.digest('hex');
  if (held) yield held;
}

/**
 * The local disk: one file per key under `root`. Bytes go to a uniquely named file under
 * `root/.partial` (same file system, never a key: keys cannot start with a dot), flushed to disk,
 * and are renamed onto the key only when whole and exact.
 */
export class DiskStorage implements FileStorage {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  private pathOf(key: string): string {
    assertStorageKey(key);
    return pathUnder(this.root, ...key.split('/'));
  }

  async put(key: string, body: Readable, size: number): Promise<{ sha256: string }> {
    const target = this.pathOf(key);
    const partialDir = path.join(this.root, '.partial');
    await fs.promises.mkdir(partialDir, { recursive: true });
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    const partial = path.join(partialDir, `${randomUUID()}.part`);
    const digest: { sha256?: string } = {};
    const out = fs.createWriteStream(partial, { flags: 'wx', flush: true });
    try {
      await pipeline(measured(body, size, digest), out);
      await fs.promises.rename(partial, target);
    } catch (err) {
      // A body that fails at once rejects the pipeline while the file's open may still be under
      // way: removing it before the stream has closed would leave the file created after.
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      await fs.promises.rm(partial, { force: true });
      throw err;
    }
    return { sha256: digest.sha256! };
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const file = this.pathOf(key);
    // Open first, so a missing key fails here and not later on the stream.
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new StoredFileMissingError(key);
      throw err;
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async delete(key: string): Promise<void> {
    await fs.promises.rm(this.pathOf(key), { force: true });
  }

  /**
   * Removes partial files older than `maxAgeMs`: a `put` cleans up after itself, but not a
   * process killed mid-upload. Returns how many were removed.
   */
  async removeStalePartials(maxAgeMs: number): Promise<number> {
    const dir = path.join(this.root, '.partial');
    let names: string[];
    try {
      names = await fs.promises.readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    let removed = 0;
    for (const name of names) {
      const file = path.join(dir, name);
      const st = await fs.promises.stat(file).catch(() => undefined);
      if (st && Date.now() - st.mtimeMs > maxAgeMs) {
        await fs.promises.rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }
}

/** The configured store: S3-compatible when S3_* is set (shared/files/s3-storage.ts), else the disk. */
export async function fileStorage(config: Pick<Config, 'dataDir' | 's3'>): Promise<FileStorage> {
  if (config.s3) {
    const { S3Storage } = await import('./s3-storage.ts');
    return new S3Storage(config.s3);
  }
  return new DiskStorage(path.join(config.dataDir, 'files'));
}
