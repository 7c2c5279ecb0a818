// Idempotency-Key (SPEC 8.8, 3.2): honoured on the operations that declare it, refused on
// every other POST, PUT, PATCH and DELETE, ignored on reads and on /api/auth/*. Keys live in
// Postgres, scoped to organization and space, so every API process shares them. A key is shared
// by every identity of that scope, but a secret the answer shows once (a route's `shownOnce`)
// goes back only to the identity that made the request (SPEC 8.8.5, issue 28).
import { createHash } from 'node:crypto';
import { ProblemError, problem } from '../../shared/errors.ts';
import { decryptSecret, encryptSecret } from '../../shared/secrets.ts';
import type { AppContext } from '../context.ts';
import type { RouteDef } from '../route.ts';
import { boundSpaceId, credentialIdentity } from './authenticate.ts';
import { renderProblem } from './problems.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
export const MAX_STORED_RESPONSE_CHARS = 1_048_576;
export const MAX_KEY_LENGTH = 255;
/** Response headers a replay carries besides the body. */
const REPLAYED_HEADERS = ['content-type', 'location', 'etag', 'link'];

/** The key to honour, or undefined; throws for a key this operation refuses. */
export function idempotencyKeyFor(ctx: AppContext, route: RouteDef): string | undefined {
  const key = ctx.get('Idempotency-Key');
  if (!key || ['GET', 'HEAD', 'OPTIONS'].includes(ctx.method) || ctx.path.startsWith('/api/auth/')) return undefined;
  if (!route.idempotent) {
    throw problem('idempotency_not_supported', { detail: `${ctx.method} ${route.path} does not honor Idempotency-Key`, param: 'Idempotency-Key' });
  }
  if (key.length > MAX_KEY_LENGTH) {
    throw problem('invalid_idempotency_key', { detail: `Idempotency-Key is ${key.length} characters; at most ${MAX_KEY_LENGTH}`, param: 'Idempotency-Key' });
  }
  return key;
}

function fingerprint(ctx: AppContext): string {
  return createHash('sha256')
    .update(`${ctx.method}\n${ctx.path}\n${ctx.querystring}\n`)
    .update(ctx.state.rawBody ?? Buffer.alloc(0))
    .digest('hex');
}

/**
 * Who is asking, as far as a secret shown once goes: the API key, session user or end-user
 * (SPEC 5.6: a key acting for an end-user is that end-user, through that key).
 */
function requestIdentity(ctx: AppContext): string {
  const who = credentialIdentity(ctx.state.auth!);
  const endUserId = ctx.state.tenancy?.endUserId;
  return endUserId && who !== `end_user:${endUserId}` ? `${who}/end_user:${endUserId}` : who;
}

/**
 * The space a key belongs to: the route's space, else the space the credential is pinned to
 * (an API key on an organization-level route), else the X-Space-Id of an organization-level
 * route that reads it (a session's space-level OAuth client), else none. Keys of another space
 * never meet.
 */
function spaceKey(ctx: AppContext, route: Pick<RouteDef, 'headers'>): string {
  const readsSpace = route.headers?.['X-Space-Id'] !== undefined;
  return ctx.state.tenancy!.space?.id ?? boundSpaceId(ctx.state.auth!) ?? (readsSpace ? ctx.get('X-Space-Id') : '');
}

/** `body` (JSON) without the fields at the dotted `paths`; a body that is not JSON is left as it is. */
function withoutFields(body: string, paths: readonly string[]): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  for (const path of paths) {
    const parts = path.split('.');
    let node = parsed as Record<string, unknown> | undefined;
    for (const part of parts.slice(0, -1)) node = node && typeof node[part] === 'object' ? (node[part] as Record<string, unknown>) : undefined;
    if (node && typeof node === 'object') delete node[parts[parts.length - 1]];
  }
  return JSON.stringify(parsed);
}

/**
 * Runs `handle` once per key: a repeat with the same fingerprint replays the stored answer
 * (`Idempotent-Replayed: true`); 2xx and 4xx answers are kept 24 h; a throw or a 5xx releases
 * the key. Permissions were checked before this, on every request, replays included: the
 * route's `scope` and its `authorize` hook (api/router.ts). A replay
 * to another identity than the request's leaves out the route's `shownOnce` fields.
 */
export async function withIdempotency(
  ctx: AppContext,
  key: string,
  handle: () => Promise<void>,
  route: Pick<RouteDef, 'shapeReplay' | 'shownOnce' | 'headers'>,
): Promise<void> {
  const { knex } = ctx.services;
  const where = { org_id: ctx.state.tenancy!.org!.id, space_key: spaceKey(ctx, route), key };
  const fp = fingerprint(ctx);
  const identity = requestIdentity(ctx);
  await knex('idempotency_keys').where(where).where('expires_at', '<', new Date()).delete();
  const claimed = await knex('idempotency_keys')
    .insert({ ...where, identity, fingerprint: fp, state: 'in_progress', expires_at: new Date(Date.now() + IDEMPOTENCY_TTL_MS) })
    .onConflict(['org_id', 'space_key', 'key'])
    .ignore()
    .returning('key');
  if (claimed.length === 0) {
    const row = await knex('idempotency_keys').where(where).first();
    if (!row || row.state === 'in_progress') {
      if (row && row.fingerprint !== fp) throw problem('idempotency_conflict', { param: 'Idempotency-Key' });
      throw problem('idempotency_in_progress', { detail: 'A request with this Idempotency-Key is still running', param: 'Idempotency-Key', retryAfter: 1 });
    }
    if (row.fingerprint !== fp) {
      throw problem('idempotency_conflict', { detail: 'This Idempotency-Key was used with another method, path, query or body', param: 'Idempotency-Key' });
    }
    const stored = decryptSecret(ctx.services.config.secretsKey, row.response_body);
    const success = row.response_status < 300;
    const shaped = route.shapeReplay && success ? await route.shapeReplay(ctx, stored) : stored;
    // Shown once means shown to its maker: another identity of the scope gets the rest.
    const body = success && route.shownOnce?.length && row.identity !== identity ? withoutFields(shaped, route.shownOnce) : shaped;
    ctx.status = row.response_status;
    for (const [k, v] of Object.entries(row.response_headers as Record<string, string>)) ctx.set(k, v);
    ctx.set('Idempotent-Replayed', 'true');
    ctx.body = body;
    return;
  }
  const release = () => knex('idempotency_keys').where(where).delete();
  try {
    await handle();
  } catch (err) {
    if (!(err instanceof ProblemError) || err.status >= 500) {
      await release();
      throw err;
    }
    renderProblem(ctx, err); // a 4xx is an answer like any other: stored and replayed
  }
  const body = typeof ctx.body === 'string' ? ctx.body : ctx.body === undefined ? '' : JSON.stringify(ctx.body);
  if (ctx.status >= 500 || body.length > MAX_STORED_RESPONSE_CHARS) {
    await release();
    return;
  }
  const headers = Object.fromEntries(REPLAYED_HEADERS.filter((h) => ctx.response.get(h)).map((h) => [h, ctx.response.get(h)]));
  // Encrypted at rest: a stored answer can hold a secret returned once (a webhook's whsec_).
  const sealed = encryptSecret(ctx.services.config.secretsKey, body);
  await knex('idempotency_keys')
    .where(where)
    .update({ state: 'done', response_status: ctx.status, response_headers: JSON.stringify(headers), response_body: sealed });
}
