// Sessions (SPEC 3.2, 5.4): 7 days, extended while used at most once a day. Only the SHA-256
// of the token is stored.
import type { Knex } from 'knex';
import { sha256Hex } from '../crypto.ts';
import { Session } from '../db/models.ts';
import { newId, newToken } from '../ids.ts';

export const SESSION_COOKIE = 'svc.session_token';
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;
export const SESSION_EXTEND_EVERY_MS = 24 * 3600 * 1000;

export async function createSession(knex: Knex, userId: string, meta: { ip?: string; userAgent?: string }): Promise<{ token: string; session: Session }> {
  const token = newToken();
  const now = new Date();
  const session = await Session.query(knex).insertAndFetch({
    id: newId('sess'),
    user_id: userId,
    token_hash: sha256Hex(token),
    realm: 'platform',
    expires_at: new Date(now.getTime() + SESSION_TTL_MS),
    last_extended_at: now,
    ip: meta.ip ?? null,
    user_agent: meta.userAgent?.slice(0, 512) ?? null,
  });
  return { token, session };
}

/** The live session for a token, or undefined (unknown or expired). */
export async function findSession(knex: Knex, token: string): Promise<Session | undefined> {
  const session = await Session.query(knex).findOne({ token_hash: sha256Hex(token) });
  if (!session || session.expires_at.getTime() <= Date.now()) return undefined;
  return session;
}

/** Pushes expiry 7 days out when the last extension is a day old; true when it did. */
export async function extendIfDue(knex: Knex, session: Session): Promise<boolean> {
  const now = Date.now();
  if (now - session.last_extended_at.getTime() < SESSION_EXTEND_EVERY_MS) return false;
  const updated = await Session.query(knex)
    .patch({ expires_at: new Date(now + SESSION_TTL_MS), last_extended_at: new Date(now) })
    .where({ id: session.id })
    // Concurrent requests race here; the row condition lets exactly one of them extend.
    .where('last_extended_at', '<=', new Date(now - SESSION_EXTEND_EVERY_MS))
    .returning('*');
  const row = (updated as unknown as Session[])[0];
  if (!row) return false;
  session.expires_at = row.expires_at;
  session.last_extended_at = row.last_extended_at;
  return true;
}

export async function deleteSessions(knex: Knex, userId: string, exceptSessionId?: string): Promise<number> {
  const q = Session.query(knex).delete().where({ user_id: userId });
  if (exceptSessionId) q.whereNot({ id: exceptSessionId });
  return q;
}
