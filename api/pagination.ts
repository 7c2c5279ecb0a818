// Offset, cursor and sequence pagination (SPEC 8.7) with RFC 8288 Link headers. An out-of-range
// `limit` falls back to the route's default.
import type { Knex } from 'knex';
import { problem } from '../shared/errors.ts';
import type { AppContext } from './context.ts';

export function limitFrom(raw: unknown, def: number, max: number): number {
  const n = typeof raw === 'number' ? raw : Number(raw);
  return Number.isInteger(n) && n >= 1 && n <= max ? n : def;
}

/**
 * The largest `offset` (an exact JavaScript integer; Postgres takes a bigint) and the largest
 * `since` of a sequence page (`seq` columns are Postgres integers): past them a request was a 500.
 */
export const OFFSET_MAX = Number.MAX_SAFE_INTEGER;
export const SEQUENCE_MAX = 2_147_483_647;

export const offsetQuery = {
  limit: { type: 'integer', description: 'Page size; out of range falls back to the default' },
  offset: { type: 'integer', minimum: 0, maximum: OFFSET_MAX, default: 0 },
} as const;

/** A link to this list with the caller's other query parameters kept; `undefined` drops one. */
function link(ctx: AppContext, params: Record<string, string | number | undefined>, rel: string): string {
  const q = new URLSearchParams(ctx.querystring);
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) q.delete(k);
    else q.set(k, String(v));
  }
  return `<${ctx.path}?${q.toString()}>; rel="${rel}"`;
}

/** Sets Link (next, prev, first, last) for an offset page of `total` items. */
export function setOffsetLinks(ctx: AppContext, page: { limit: number; offset: number; total: number }): void {
  const { limit, offset, total } = page;
  const links = [link(ctx, { limit, offset: 0 }, 'first')];
  if (offset + limit < total) links.push(link(ctx, { limit, offset: offset + limit }, 'next'));
  if (offset > 0) links.push(link(ctx, { limit, offset: Math.max(0, offset - limit) }, 'prev'));
  links.push(link(ctx, { limit, offset: Math.max(0, Math.floor((Math.max(total, 1) - 1) / limit) * limit) }, 'last'));
  ctx.set('Link', links.join(', '));
}

/** Sets Link rel=next for a sequence page that has more after `lastSeq`. */
export function setSequenceNext(ctx: AppContext, lastSeq: number, limit: number): void {
  ctx.set('Link', link(ctx, { since: lastSeq, limit }, 'next'));
}

export const cursorQuery = {
  limit: { type: 'integer', description: 'Page size; out of range falls back to the default' },
  startingAfter: { type: 'string', description: 'Id of the last item received: the page after it' },
  endingBefore: { type: 'string', description: 'Id of the first item received: the page before it' },
} as const;

/**
 * Cursor pagination over rows ordered newest first by (created_at, key): `startingAfter` pages
 * forward, `endingBefore` backward. The cursor is the key of an item of this very list (`base`
 * with its filters), so an unknown or foreign cursor is 400. Sets Link rel=next/prev, keeping the
 * caller's other query parameters (filters such as `spaceId`).
 *
 * `key` and `createdAt` name the columns, qualified when `base` joins tables (`s.id`,
 * `m.created_at`); `key` defaults to `id` and need not be one (members are keyed by `user_id`).
 * The row property read for the Link is the column name without its table.
 */
export async function cursorPage<T extends object>(
  ctx: AppContext,
  base: Knex.QueryBuilder,
  opts: { limit: number; startingAfter?: string; endingBefore?: string; key?: string; createdAt?: string },
): Promise<{ rows: T[]; hasMore: boolean }> {
  const { knex } = ctx.services;
  const key = opts.key ?? 'id';
  const createdAt = opts.createdAt ?? 'created_at';
  const keyOf = (row: T) => String((row as Record<string, unknown>)[key.slice(key.lastIndexOf('.') + 1)]);
  const cursorId = opts.startingAfter ?? opts.endingBefore;
  const q = base.clone();
  let backward = false;
  if (cursorId) {
    const param = opts.startingAfter ? 'startingAfter' : 'endingBefore';
    const cursor = await base.clone().where(key, cursorId).first();
    if (!cursor) {
      throw problem('validation_failed', {
        detail: `${param} names no item of this list`,
        param,
        errors: [{ field: param, code: 'invalid_value', message: 'unknown cursor' }],
      });
    }
    backward = !opts.startingAfter;
    // Compared in SQL: timestamps keep their microseconds (a JS Date would round them).
    const at = base.clone().clearSelect().where(key, cursorId).select(createdAt, key);
    q.where(knex.raw('(??, ??)', [createdAt, key]), backward ? '>' : '<', at);
  }
  const dir = backward ? 'asc' : 'desc';
  const fetched = (await q
    .orderBy([
      { column: createdAt, order: dir },
      { column: key, order: dir },
    ])
    .limit(opts.limit + 1)) as T[];
  const hasMore = fetched.length > opts.limit;
  const rows = fetched.slice(0, opts.limit);
  if (backward) rows.reverse();
  const links: string[] = [];
  const { limit } = opts;
  if (rows.length && (backward || hasMore)) links.push(link(ctx, { limit, startingAfter: keyOf(rows[rows.length - 1]), endingBefore: undefined }, 'next'));
  if (rows.length && (opts.startingAfter !== undefined || (backward && hasMore)))
    links.push(link(ctx, { limit, endingBefore: keyOf(rows[0]), startingAfter: undefined }, 'prev'));
  if (links.length) ctx.set('Link', links.join(', '));
  return { rows, hasMore };
}
