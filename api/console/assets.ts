// The console's stylesheet and ES modules (assets/), served by the API process as they are: no
// build step. They are read once at start and served under a path holding a hash of their
// content, `/console/assets/<version>/<file>`, cached for a year; a page names the version it
// was rendered with, so a deploy never mixes old and new modules. Modules import each other
// relatively and so stay within one version.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AppContext } from '../context.ts';

const ROOT = path.join(import.meta.dirname, 'assets');
const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml' };

function readAll(dir: string, prefix = ''): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix + entry.name;
    if (entry.isDirectory()) for (const [k, v] of readAll(path.join(dir, entry.name), `${rel}/`)) out.set(k, v);
    else if (TYPES[path.extname(entry.name)]) out.set(rel, fs.readFileSync(path.join(dir, entry.name)));
  }
  return out;
}

const FILES = readAll(ROOT);
const VERSION = (() => {
  const h = createHash('sha256');
  for (const [name, body] of [...FILES].sort(([a], [b]) => a.localeCompare(b))) h.update(name).update(body);
  return h.digest('hex').slice(0, 12);
})();

export const ASSETS_PREFIX = '/console/assets/';

/** The URL of an asset of this version: `assetUrl('console.css')`. */
export function assetUrl(name: string): string {
  return `${ASSETS_PREFIX}${VERSION}/${name}`;
}

/**
 * Answers `GET /console/assets/<version>/<file>`; false when the path is no asset. Another
 * version's URL (a page rendered before a deploy) gets today's file, not cached.
 */
export function serveAsset(ctx: AppContext): boolean {
  const m = /^\/console\/assets\/([0-9a-f]{12})\/([a-z0-9/_-]+\.(?:js|css|svg))$/.exec(ctx.path);
  const body = m && FILES.get(m[2]);
  if (!m || !body || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return false;
  (ctx.state as { metricsRoute?: string }).metricsRoute = '/console/assets'; // one label for every file
  ctx.status = 200;
  ctx.set('Content-Type', TYPES[path.extname(m[2])]);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cache-Control', m[1] === VERSION ? 'public, max-age=31536000, immutable' : 'no-cache');
  ctx.body = body;
  return true;
}
