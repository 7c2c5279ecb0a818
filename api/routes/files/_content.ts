// What a file's bytes are answered with: a safe Content-Disposition, a Content-Type that is a
// media type (never a header injection), and RFC 9110 byte ranges.

/** RFC 6266 with RFC 8187 (ex-5987) `filename*`, and a plain-ASCII `filename` for old clients. */
export function contentDisposition(kind: 'attachment' | 'inline', name: string): string {
  const ascii = name.replace(/[^\x20-\x7E]|["\\%]/g, '_');
  // attr-char: ALPHA / DIGIT / "!" / "#" / "$" / "&" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~"
  const encoded = Array.from(new TextEncoder().encode(name), (b) => {
    const c = String.fromCharCode(b);
    return /[A-Za-z0-9!#$&+\-.^_`|~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

const TOKEN = '[A-Za-z0-9!#$&^_.+-]+';
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}( *; *${TOKEN}=(${TOKEN}|"[^"\\u0000-\\u001F\\u007F]*"))*$`);

/** The stored type when it is a well-formed media type, else `application/octet-stream`. */
export function safeContentType(stored: string): string {
  return MEDIA_TYPE.test(stored) ? stored : 'application/octet-stream';
}

export type RangeAnswer = { kind: 'whole' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * One `Range` header against a file of `size` bytes (RFC 9110 14.2). A single `a-b`, `a-` or
 * `-n` is served as asked (clipped to the end); a range starting past the end, or `-0`, is
 * unsatisfiable. Several ranges, another unit, or a malformed header: the whole file, as RFC
 * 9110 lets a server ignore Range.
 */
export function parseRange(header: string | undefined, size: number): RangeAnswer {
  if (!header) return { kind: 'whole' };
  const m = /^bytes=\s*(\d*)-(\d*)\s*$/i.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'whole' };
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? Number.MAX_SAFE_INTEGER : Number(m[2]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: Math.min(end, size - 1) };
}

/** `If-None-Match` (weak comparison, RFC 9110 13.1.2) against a strong ETag. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}
