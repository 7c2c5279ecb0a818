// Offset and sequence pagination (SPEC 8.7) with RFC 8288 Link headers. An out-of-range
// `limit` falls back to the route's default.
import type { AppContext } from './route.ts';

export function limitFrom(raw: unknown, def: number, max: number): number {
  const n = typeof raw === 'number' ? raw : Number(raw);
  return Number.isInteger(n) && n >= 1 && n <= max ? n : def;
}

export const offsetQuery = {
  limit: { type: 'integer', description: 'Page size; out of range falls back to the default' },
  offset: { type: 'integer', minimum: 0, default: 0 },
} as const;

function link(ctx: AppContext, params: Record<string, string | number>, rel: string): string {
  const q = new URLSearchParams(ctx.querystring);
  for (const [k, v] of Object.entries(params)) q.set(k, String(v));
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
