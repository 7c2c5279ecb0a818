// Where file bytes live (DESIGN.md section 7): one interface, two stores (disk-storage.ts,
// s3-storage.ts), opened by configured-storage.ts. The local disk under
// `$DATA_DIR/files` by default; S3-compatible object storage when S3_* is set, so API replicas
// and workers on several machines share files. Bytes are written whole or not at all: a partial
// or mismatched upload is never visible under its key.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';

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
  /**
   * Every key under the folder `prefix` (a key's first segments, ending in `/`), in no
   * particular order: what a folder of our own making holds (workspace checkpoints,
   * activities/sandbox/checkpoints.ts), to delete it or pick one.
   */
  list(prefix: string): Promise<string[]>;
  /** Removes every key under the folder `prefix`, and the folder; nothing there is not an error. */
  deleteAll(prefix: string): Promise<void>;
}

/** Keys are relative paths of our own making: letters, digits, `_ - . /`, no `..`, no leading dot or slash. */
export function assertStorageKey(key: string): void {
  if (!/^[A-Za-z0-9_][A-Za-z0-9_./-]*$/.test(key) || key.includes('..') || key.includes('//') || key.endsWith('/')) {
    throw new Error(`not a storage key: ${key}`);
  }
}

/** A folder of keys, `<segments>/`: checked as keys are, so it never names a path outside the store. */
export function assertStoragePrefix(prefix: string): void {
  if (!prefix.endsWith('/')) throw new Error(`not a storage folder: ${prefix}`);
  assertStorageKey(prefix.slice(0, -1));
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
