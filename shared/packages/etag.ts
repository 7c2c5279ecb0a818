// Strong ETags of package drafts (SPEC 8.9): they change with every draft revision.
import { createHash } from 'node:crypto';
import type { PackageRow } from './types.ts';

export function draftEtag(p: Pick<PackageRow, 'id' | 'draft_revision'>): string {
  return `"${createHash('sha256').update(`${p.id}:${p.draft_revision}`).digest('base64url').slice(0, 27)}"`;
}

/** Parsed If-Match: '*' or the strong tags listed (weak tags never match, RFC 9110 13.1.1). */
export function parseIfMatch(header: string | undefined): '*' | string[] | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  if (header.trim() === '*') return '*';
  return header
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t && !t.startsWith('W/'));
}

/** True when the header allows writing over the draft whose tag is `current`. */
export function ifMatchAllows(header: '*' | string[], current: string): boolean {
  return header === '*' || header.includes(current);
}
