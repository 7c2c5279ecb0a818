// The local disk store of file bytes (shared/files/storage.ts holds the interface it implements).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathUnder } from './confine.ts';
import { type ByteRange, type FileStorage, StoredFileMissingError, assertStorageKey, assertStoragePrefix, measured } from './storage.ts';

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

  async list(prefix: string): Promise<string[]> {
    assertStoragePrefix(prefix);
    const dir = this.pathOf(prefix.slice(0, -1));
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(dir, { withFileTypes: true, recursive: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
      throw err;
    }
    return entries.filter((e) => e.isFile()).map((e) => path.relative(this.root, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
  }

  async deleteAll(prefix: string): Promise<void> {
    assertStoragePrefix(prefix);
    await fs.promises.rm(this.pathOf(prefix.slice(0, -1)), { recursive: true, force: true });
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
