// Package archives: reading an untrusted zip safely, and writing a version back as a zip.
// Limits are enforced on the bytes actually inflated, never on what the headers claim.
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { unsafeNameReason } from '../files/confine.ts';
import { problem } from '../errors.ts';
import { type FileMap, fileBytes, type StoredFile } from './types.ts';

const MiB = 1024 * 1024;

export const ARCHIVE_LIMITS = {
  /** Compressed archive size (413 archive_too_large above it). */
  maxArchiveBytes: 10 * MiB,
  maxEntries: 200,
  /** Sum of inflated bytes over every entry. */
  maxTotalBytes: 20 * MiB,
  /** Inflated/compressed ratio allowed per entry once it passes `ratioFloorBytes`. */
  maxRatio: 100,
  ratioFloorBytes: 64 * 1024,
  maxPathLength: 255,
};

function invalid(detail: string): never {
  throw problem('invalid_archive', detail);
}

/**
 * Why an entry name is unsafe, or undefined when it is a plain relative path: each of its
 * folders and its file name one plain segment (shared/files/confine.ts), a folder entry's
 * trailing slash aside.
 */
export function unsafeEntryReason(name: string): string | undefined {
  if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) return 'is an absolute path';
  if (name.length > ARCHIVE_LIMITS.maxPathLength) return `is longer than ${ARCHIVE_LIMITS.maxPathLength} characters`;
  if (name === '') return undefined;
  const parts = name.split('/');
  if (parts.at(-1) === '') parts.pop();
  for (const part of parts) {
    if (part === '__proto__') return 'uses the reserved name __proto__';
    const reason = unsafeNameReason(part);
    if (reason) return `has a part that ${reason}`;
  }
  return undefined;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
/** Unix mode in the high half of the external attributes (zips made on Unix). */
function isSymlink(entry: yauzl.Entry): boolean {
  return ((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK;
}

/** Operating-system litter skipped silently. */
function isLitter(name: string): boolean {
  return name.startsWith('__MACOSX/') || name === '.DS_Store' || name.endsWith('/.DS_Store');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
function store(bytes: Buffer): StoredFile {
  if (!bytes.includes(0)) {
    try {
      return { encoding: 'utf8', content: utf8.decode(bytes) };
    } catch {
      // not text: fall through
    }
  }
  return { encoding: 'base64', content: bytes.toString('base64') };
}

function open(buffer: Buffer): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true }, (err, zip) =>
      err ? reject(problem('invalid_archive', `The upload is not a readable zip archive: ${err.message}`)) : resolve(zip),
    );
  });
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (err, stream) => (err ? reject(err) : resolve(stream))));
}

interface Budget {
  total: number;
}

/** Inflates one entry, counting bytes as they come: stops at the first limit crossed. */
async function inflate(zip: yauzl.ZipFile, entry: yauzl.Entry, name: string, budget: Budget): Promise<Buffer> {
  const stream = await openEntry(zip, entry);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      budget.total += chunk.length;
      if (budget.total > ARCHIVE_LIMITS.maxTotalBytes) {
        invalid(`The archive inflates to more than ${ARCHIVE_LIMITS.maxTotalBytes} bytes (stopped at entry "${name}")`);
      }
      if (size > ARCHIVE_LIMITS.ratioFloorBytes && size > Math.max(1, entry.compressedSize) * ARCHIVE_LIMITS.maxRatio) {
        invalid(`Entry "${name}" inflates more than ${ARCHIVE_LIMITS.maxRatio} times its compressed size (a decompression bomb)`);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    stream.destroy();
    if ((err as { code?: string }).code === 'invalid_archive') throw err;
    invalid(`Entry "${name}" cannot be read: ${(err as Error).message}`);
  }
  return Buffer.concat(chunks);
}

function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | undefined> {
  return new Promise((resolve, reject) => {
    const onEntry = (e: yauzl.Entry) => done(() => resolve(e));
    const onEnd = () => done(() => resolve(undefined));
    const onError = (err: Error) => done(() => reject(problem('invalid_archive', `The zip archive is malformed: ${err.message}`)));
    const done = (f: () => void) => {
      zip.off('entry', onEntry).off('end', onEnd).off('error', onError);
      f();
    };
    zip.on('entry', onEntry).on('end', onEnd).on('error', onError);
    zip.readEntry();
  });
}

export interface ReadArchiveOptions {
  /** Compressed size limit (default ARCHIVE_LIMITS.maxArchiveBytes). */
  maxArchiveBytes?: number;
  /**
   * Keeps only some entries, each under the path returned (undefined skips the entry unread).
   * A repository zip holds far more than one package: the entry and size limits then count
   * the kept entries only, and a skipped entry's name is not judged.
   */
  select?: (name: string) => string | undefined;
}

/** Entries scanned at most when `select` skips most of them (a repository zip). */
const MAX_SCANNED_ENTRIES = 100_000;

/**
 * Reads an uploaded archive into `{path: {encoding, content}}`. Refuses (400 invalid_archive,
 * naming the entry) non-zips, unsafe paths, symlinks, encrypted entries, too many entries and
 * decompression bombs; 413 archive_too_large above 10 MiB.
 */
export async function readArchive(buffer: Buffer, opts: ReadArchiveOptions = {}): Promise<FileMap> {
  const maxBytes = opts.maxArchiveBytes ?? ARCHIVE_LIMITS.maxArchiveBytes;
  if (buffer.length > maxBytes) {
    throw problem('archive_too_large', `The archive is ${buffer.length} bytes; the limit is ${maxBytes}`);
  }
  const zip = await open(buffer);
  try {
    const maxScanned = opts.select ? MAX_SCANNED_ENTRIES : ARCHIVE_LIMITS.maxEntries;
    if (zip.entryCount > maxScanned) invalid(`The archive has ${zip.entryCount} entries; the limit is ${maxScanned}`);
    const files: FileMap = {};
    const budget: Budget = { total: 0 };
    let seen = 0;
    for (let entry = await nextEntry(zip); entry; entry = await nextEntry(zip)) {
      const raw = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
      const name = opts.select ? opts.select(raw) : raw;
      if (name === undefined) continue;
      if (++seen > ARCHIVE_LIMITS.maxEntries) invalid(`The archive has more than ${ARCHIVE_LIMITS.maxEntries} entries`);
      const reason = unsafeEntryReason(raw) ?? unsafeEntryReason(name);
      if (reason) invalid(`Entry "${raw}" ${reason}`);
      if (isSymlink(entry)) invalid(`Entry "${raw}" is a symbolic link`);
      if (name === '' || name.endsWith('/') || isLitter(name)) continue;
      if (entry.isEncrypted()) invalid(`Entry "${raw}" is encrypted`);
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) invalid(`Entry "${raw}" uses an unsupported compression method`);
      if (Object.hasOwn(files, name)) invalid(`Entry "${raw}" appears twice`);
      files[name] = store(await inflate(zip, entry, raw, budget));
    }
    return files;
  } finally {
    zip.close();
  }
}

const EPOCH = new Date('2000-01-01T00:00:00Z');

/** A zip of `files`, entries sorted by path with a fixed date so equal contents give equal bytes. */
export async function writeArchive(files: FileMap): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const path of Object.keys(files).sort()) {
    zip.addBuffer(fileBytes(files[path]), path, { mtime: EPOCH, mode: 0o100644 });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
