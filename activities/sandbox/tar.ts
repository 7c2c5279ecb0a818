// A small tar (POSIX ustar, with pax records for long names) for workspace checkpoints
// (checkpoints.ts): written from a list of entries the caller walked, read back into a folder
// with every path confined. No dependency: the format is a few fixed fields, and the reader is
// where a crafted archive would attack the worker (root), so it is ours to keep strict.
//
// The reader refuses, before it writes anything for the entry: an absolute name, `..`, `.` or
// empty segments, a reserved top-level name (the workspace's read-only mount points), a link
// whose target leads out of the folder as the sandbox sees it, any type but regular files,
// folders and symbolic links (hard links, devices, fifos), an entry whose folder is not a real
// folder made earlier in the archive, an entry already there, and archives whose files are
// larger in total than the caller allows. Files are created exclusively (O_EXCL: never through
// a link, never over a file), and no link is ever followed while restoring.
import fs from 'node:fs';
import path from 'node:path';

const BLOCK = 512;
const END = Buffer.alloc(2 * BLOCK);
/** Bytes a file is read in. */
const READ_CHUNK = 1024 * 1024;

export type TarEntry =
  | { type: 'dir'; path: string; mode: number; mtimeMs: number }
  | { type: 'file'; path: string; mode: number; mtimeMs: number; size: number; source: string }
  | { type: 'symlink'; path: string; mode: number; mtimeMs: number; target: string };

/** The archive cannot be restored: it is not one we wrote, or not whole. Nothing past its entry is written. */
export class TarRefused extends Error {}

/** A file changed size between the walk and its read: the archive would not be what was walked. */
export class TarSourceChanged extends Error {}

/** What ustar's 11 octal digits hold (8 GiB); a larger file's size is a pax record. */
const MAX_OCTAL_SIZE = 0o77777777777;
const padding = (n: number) => (BLOCK - (n % BLOCK)) % BLOCK;

/** `len key=value\n`, the length counting itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (String(len).length + Buffer.byteLength(body) !== len) len++;
  return `${len}${body}`;
}

/** The name as stored: folders end with `/`. */
const storedName = (e: TarEntry) => (e.type === 'dir' ? `${e.path}/` : e.path);

/** The pax records an entry needs: names that do not fit ustar's 100 bytes. */
function paxOf(e: TarEntry): Buffer | undefined {
  let records = '';
  const name = storedName(e);
  if (Buffer.byteLength(name) > 100) records += paxRecord('path', name);
  if (e.type === 'symlink' && Buffer.byteLength(e.target) > 100) records += paxRecord('linkpath', e.target);
  if (e.type === 'file' && e.size > MAX_OCTAL_SIZE) records += paxRecord('size', String(e.size));
  return records ? Buffer.from(records) : undefined;
}

function octal(buf: Buffer, offset: number, length: number, value: number): void {
  buf.write(
    `${Math.floor(value)
      .toString(8)
      .padStart(length - 1, '0')}\0`,
    offset,
    length,
    'ascii',
  );
}

function header(name: string, type: string, mode: number, size: number, mtimeMs: number, linkname = ''): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, mode);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, size);
  octal(h, 136, 12, Math.max(0, mtimeMs / 1000));
  h.write(type, 156, 1, 'ascii');
  h.write(linkname, 157, 100, 'utf8');
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  h.fill(' ', 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return h;
}

function headersOf(e: TarEntry): Buffer {
  const pax = paxOf(e);
  const type = e.type === 'dir' ? '5' : e.type === 'symlink' ? '2' : '0';
  const size = e.type === 'file' && e.size <= MAX_OCTAL_SIZE ? e.size : 0;
  const own = header(storedName(e), type, e.mode & 0o777, size, e.mtimeMs, e.type === 'symlink' ? e.target : '');
  if (!pax) return own;
  return Buffer.concat([header('PaxHeader', 'x', 0o644, pax.length, e.mtimeMs), pax, Buffer.alloc(padding(pax.length)), own]);
}

/** The archive's exact length, known before a byte is read (a store takes the size first). */
export function tarSize(entries: TarEntry[]): number {
  let size = END.length;
  for (const e of entries) {
    const pax = paxOf(e);
    size += BLOCK + (pax ? BLOCK + pax.length + padding(pax.length) : 0);
    if (e.type === 'file') size += e.size + padding(e.size);
  }
  return size;
}

/** Reads exactly `e.size` bytes of a regular file, never through a link; TarSourceChanged when it is no longer that. */
function* fileBody(e: Extract<TarEntry, { type: 'file' }>): Generator<Buffer> {
  let fd: number;
  try {
    fd = fs.openSync(e.source, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    throw new TarSourceChanged(`${e.path} could not be read: ${(err as Error).message}`);
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw new TarSourceChanged(`${e.path} is no longer a file`);
    let left = e.size;
    while (left > 0) {
      const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, left));
      const n = fs.readSync(fd, buf, 0, buf.length, e.size - left);
      if (n === 0) throw new TarSourceChanged(`${e.path} shrank while it was read`);
      left -= n;
      yield n === buf.length ? buf : buf.subarray(0, n);
    }
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The archive of `entries`, in their order (a folder before what it holds), `tarSize(entries)`
 * bytes. Files are read synchronously, a chunk at a time: the consumer's writes interleave.
 */
export async function* tarStream(entries: TarEntry[]): AsyncGenerator<Buffer> {
  for (const e of entries) {
    yield headersOf(e);
    if (e.type !== 'file') continue;
    yield* fileBody(e);
    if (padding(e.size)) yield Buffer.alloc(padding(e.size));
  }
  yield END;
}

/** Whether a link at `entryPath` (relative to the folder) to `target` stays in the folder mounted at `mountedAt`. */
export function linkStaysIn(mountedAt: string, entryPath: string, target: string): boolean {
  if (!target || target.includes('\0')) return false;
  const resolved = path.posix.resolve(path.posix.dirname(`${mountedAt}/${entryPath}`), target);
  return resolved === mountedAt || resolved.startsWith(`${mountedAt}/`);
}

/** A stream read in exact lengths. */
class Bytes {
  private readonly it: AsyncIterator<Uint8Array | string>;
  private chunk: Buffer = Buffer.alloc(0);
  private offset = 0;
  /** Bytes taken so far. */
  taken = 0;
  private readonly max: number;

  constructor(source: AsyncIterable<Uint8Array | string>, max: number) {
    this.it = source[Symbol.asyncIterator]();
    this.max = max;
  }

  private async more(): Promise<boolean> {
    while (this.offset >= this.chunk.length) {
      const next = await this.it.next();
      if (next.done) return false;
      this.chunk = typeof next.value === 'string' ? Buffer.from(next.value) : Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
      this.offset = 0;
    }
    return true;
  }

  /** The next pieces making exactly `n` bytes; TarRefused when the stream ends first. */
  async *pieces(n: number): AsyncGenerator<Buffer> {
    if (this.taken + n > this.max) throw new TarRefused(`the checkpoint is larger than ${this.max} bytes`);
    let left = n;
    while (left > 0) {
      if (!(await this.more())) throw new TarRefused('the checkpoint ends before its last entry');
      const piece = this.chunk.subarray(this.offset, this.offset + left);
      this.offset += piece.length;
      this.taken += piece.length;
      left -= piece.length;
      yield piece;
    }
  }

  async read(n: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const p of this.pieces(n)) parts.push(p);
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  async skip(n: number): Promise<void> {
    for await (const _ of this.pieces(n));
  }

  /** Stops reading: a stream left unread (what follows the end, or a refusal) is destroyed, its file closed. */
  async close(): Promise<void> {
    await this.it.return?.();
  }
}

function field(h: Buffer, offset: number, length: number): string {
  const raw = h.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString('utf8');
}

function number(h: Buffer, offset: number, length: number, what: string): number {
  const text = field(h, offset, length).trim();
  if (!/^[0-7]*$/.test(text)) throw new TarRefused(`an entry's ${what} is not an octal number`);
  return text ? Number.parseInt(text, 8) : 0;
}

function checksumOk(h: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i];
  return number(h, 148, 8, 'checksum') === sum;
}

function paxFields(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const len = Number(data.subarray(at, space).toString('ascii'));
    if (space === -1 || !Number.isInteger(len) || len <= 0 || at + len > data.length) throw new TarRefused('a pax record is malformed');
    const record = data.subarray(space + 1, at + len - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq === -1) throw new TarRefused('a pax record is malformed');
    out[record.slice(0, eq)] = record.slice(eq + 1);
    at += len;
  }
  return out;
}

export interface ExtractOptions {
  /** The files' bytes together at most (the workspace's disk ceiling). */
  maxFileBytes: number;
  /** Top-level names no entry may have (mount points). */
  reserved: string[];
  /** Where the folder is as the sandbox sees it: links must stay under it. */
  mountedAt: string;
  /** Given to every entry (as root: the sandbox's uid). */
  owner?: number;
}

/** An entry's name as segments, or TarRefused. */
function segmentsOf(name: string, reserved: string[]): string[] {
  const trimmed = name.endsWith('/') ? name.slice(0, -1) : name;
  if (!trimmed || trimmed.startsWith('/')) throw new TarRefused(`the entry ${JSON.stringify(name)} is not a relative path`);
  if (trimmed.includes('\0')) throw new TarRefused('an entry name holds a NUL character');
  const segments = trimmed.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) throw new TarRefused(`the entry ${JSON.stringify(name)} has an empty, . or .. segment`);
  if (reserved.includes(segments[0])) throw new TarRefused(`the entry ${JSON.stringify(name)} is under ${segments[0]}/, which a checkpoint never holds`);
  return segments;
}

/**
 * Restores the archive `source` into the folder `dir` (which holds nothing but the reserved
 * names). Folders get their modes and times last, deepest first, so a read-only folder is
 * filled before it becomes so.
 */
export async function extractTar(source: AsyncIterable<Uint8Array | string>, dir: string, opts: ExtractOptions): Promise<{ entries: number; bytes: number }> {
  // Headers and padding included, an archive we wrote is far below twice its files' bytes plus a little.
  const bytes = new Bytes(source, 2 * opts.maxFileBytes + 1024 * 1024);
  try {
    return await extractFrom(bytes, dir, opts);
  } finally {
    await bytes.close();
  }
}

async function extractFrom(bytes: Bytes, dir: string, opts: ExtractOptions): Promise<{ entries: number; bytes: number }> {
  /** Folders made here, by relative path: only they may hold entries. */
  const made = new Set<string>(['']);
  const folders: Array<{ host: string; mode: number; mtimeMs: number }> = [];
  let fileBytes = 0;
  let entries = 0;
  let pax: Record<string, string> = {};
  const chown = (p: string) => {
    if (opts.owner !== undefined) fs.lchownSync(p, opts.owner, opts.owner);
  };
  for (;;) {
    const h = await bytes.read(BLOCK);
    if (h.every((b) => b === 0)) break;
    if (!checksumOk(h)) throw new TarRefused('an entry header fails its checksum: the checkpoint is damaged or not a tar archive');
    const type = String.fromCharCode(h[156]);
    let size = number(h, 124, 12, 'size');
    if (type === 'x' || type === 'g') {
      const data = await bytes.read(size);
      await bytes.skip(padding(size));
      if (type === 'x') pax = paxFields(data);
      continue;
    }
    const name = pax.path ?? field(h, 0, 100);
    const target = pax.linkpath ?? field(h, 157, 100);
    if (pax.size !== undefined) size = Number(pax.size);
    pax = {};
    const segments = segmentsOf(name, opts.reserved);
    const rel = segments.join('/');
    const parent = segments.slice(0, -1).join('/');
    if (!made.has(parent)) throw new TarRefused(`the entry ${rel} comes before its folder ${parent}/, or its folder is not a folder`);
    const host = path.join(dir, ...segments);
    const mode = number(h, 100, 8, 'mode') & 0o777;
    const mtimeMs = number(h, 136, 12, 'mtime') * 1000;
    if (type !== '0' && type !== '\0' && size !== 0) throw new TarRefused(`the entry ${rel} is not a file but carries ${size} bytes`);
    entries++;
    try {
      if (type === '5') {
        fs.mkdirSync(host, { mode: 0o700 });
        chown(host);
        made.add(rel);
        folders.push({ host, mode, mtimeMs });
      } else if (type === '2') {
        if (!linkStaysIn(opts.mountedAt, rel, target)) throw new TarRefused(`the link ${rel} -> ${target} leads out of ${opts.mountedAt}`);
        fs.symlinkSync(target, host);
        chown(host);
        fs.lutimesSync(host, mtimeMs / 1000, mtimeMs / 1000);
      } else if (type === '0' || type === '\0') {
        if (!Number.isSafeInteger(size) || size < 0) throw new TarRefused(`the size of ${rel} is not a number`);
        fileBytes += size;
        if (fileBytes > opts.maxFileBytes) throw new TarRefused(`the checkpoint's files are larger than ${opts.maxFileBytes} bytes (the disk ceiling)`);
        // O_EXCL: created here, never through a link nor over something there.
        const fd = fs.openSync(host, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
        try {
          for await (const piece of bytes.pieces(size)) fs.writeSync(fd, piece);
          fs.fchmodSync(fd, mode);
          fs.futimesSync(fd, mtimeMs / 1000, mtimeMs / 1000);
          if (opts.owner !== undefined) fs.fchownSync(fd, opts.owner, opts.owner);
        } finally {
          fs.closeSync(fd);
        }
        await bytes.skip(padding(size));
      } else {
        throw new TarRefused(`the entry ${rel} is of type ${JSON.stringify(type)}: a checkpoint holds only files, folders and symbolic links`);
      }
    } catch (err) {
      if (err instanceof TarRefused) throw err;
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new TarRefused(`the entry ${rel} is there twice`);
      throw err;
    }
  }
  for (const f of folders.reverse()) {
    fs.chmodSync(f.host, f.mode);
    fs.utimesSync(f.host, f.mtimeMs / 1000, f.mtimeMs / 1000);
  }
  return { entries, bytes: fileBytes };
}
