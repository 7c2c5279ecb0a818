// Names that become paths (issue 28). A name a tenant supplies (a file input's property name, an
// upload's or an output's file name, a segment of a package file's path or of a storage key) is
// checked where it enters to be one plain path segment; and where a path is built from names,
// `pathUnder` checks again that the result stays under its root, so a name that skipped the
// first check (a row written before it existed) still cannot lead a write elsewhere.
import path from 'node:path';

/** NAME_MAX of the common file systems: longer names cannot be created anyway. */
export const MAX_NAME_BYTES = 255;

/** How the rule reads in problem messages and the README. */
export const SAFE_NAME_RULE = `a single path segment: no "/", "\\", NUL or control characters, not "." or "..", at most ${MAX_NAME_BYTES} bytes`;

/** Why `name` is not one plain path segment, or undefined when it is. */
export function unsafeNameReason(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (name === '.' || name === '..') return 'is "." or ".."';
  if (name.includes('/')) return 'contains "/"';
  if (name.includes('\\')) return 'contains a backslash';
  if (name.includes('\0')) return 'contains a NUL character';
  // Control characters break log lines and headers where names are shown; no file needs them.
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return 'contains a control character';
  }
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) return `is longer than ${MAX_NAME_BYTES} bytes`;
  return undefined;
}

/** A path built from names would not stay under its root. */
export class PathEscapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathEscapeError';
  }
}

/**
 * `root` joined with `names`, each of which must be one plain segment, resolved and checked to
 * stay under `root`; PathEscapeError otherwise, before anything touches the file system.
 */
export function pathUnder(root: string, ...names: string[]): string {
  for (const name of names) {
    const reason = unsafeNameReason(name);
    if (reason) throw new PathEscapeError(`${JSON.stringify(name)} is not ${SAFE_NAME_RULE}: it ${reason}`);
  }
  const base = path.resolve(root);
  const full = path.resolve(base, ...names);
  const rel = path.relative(base, full);
  if (rel.split(path.sep)[0] === '..' || path.isAbsolute(rel)) throw new PathEscapeError(`${JSON.stringify(names.join('/'))} leaves ${base}`);
  return full;
}
