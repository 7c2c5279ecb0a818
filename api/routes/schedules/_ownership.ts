// Who may change a schedule. Its runs execute as its creator, with the creator's connections, so
// only the creator decides what runs and when; admins of the space may stop it (pause, delete)
// or let it run again (resume), never make it run something else in the creator's name.
import { SpaceMember } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import { isOrgAdmin } from '../../../shared/identity/tenancy.ts';
import type { ScheduleRow } from '../../../shared/schedules/model.ts';
import type { AppContext } from '../../context.ts';

/** `creator`: every change; `admin`: pause, resume and delete only. */
export type ScheduleAuthority = 'creator' | 'admin';

/**
 * Whether the caller holds the `admin` role of the request's space, by role rather than by the
 * scopes it grants (a custom role holding every scope is still not an admin). Org owners and
 * admins act as `admin` in every shared space, a personal space's owner in theirs (as
 * `spaceScopes`); X-View-As makes them act as the role they view as.
 */
async function isSpaceAdmin(ctx: AppContext): Promise<boolean> {
  const { org, orgRole, space, viewAs } = ctx.state.tenancy!;
  const userId = ctx.state.auth!.userId;
  if (viewAs && viewAs !== 'admin') return false;
  if (space!.kind === 'personal') return space!.owner_user_id === userId;
  if (isOrgAdmin(orgRole)) return true;
  const member = await SpaceMember.query(ctx.services.knex).findOne({ org_id: org!.id, space_id: space!.id, user_id: userId });
  return member?.preset_role === 'admin';
}

/**
 * What the caller may do to `schedule` (already found in its space), or the refusal: 404 to
 * whoever cannot read it, 403 `forbidden` to anyone else. The creator is the person acting as
 * themselves, by session or by one of their API keys; acting for an end-user is neither the
 * creator nor an admin (scheduled runs execute as a person).
 */
export async function scheduleAuthority(ctx: AppContext, schedule: Pick<ScheduleRow, 'created_by'>): Promise<ScheduleAuthority> {
  const { scopes, endUserId } = ctx.state.tenancy!;
  if (!endUserId) {
    if (ctx.state.auth!.userId === schedule.created_by) return 'creator';
    if (await isSpaceAdmin(ctx)) return 'admin';
  }
  if (!scopes.has('schedules:read')) throw problem('not_found', 'No such schedule');
  if (endUserId) throw problem('forbidden', 'Schedules cannot be changed or deleted while acting for an end-user (Service-User): scheduled runs execute as a person');
  throw problem('forbidden', 'Only the person who created this schedule can change it; admins of the space can pause, resume or delete it');
}
