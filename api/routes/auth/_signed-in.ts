import type { User } from '../../../shared/db/models.ts';
import type { AppContext } from '../../context.ts';
import { openSession } from '../../session-cookie.ts';
import { userDto } from '../../../shared/identity/model.ts';

/** Opens a session for the user, sets the cookie, and returns the session body. */
export async function signIn(ctx: AppContext, user: User) {
  const session = await openSession(ctx, user.id);
  return { user: userDto(user), session: { expiresAt: session.expires_at.toISOString() } };
}
