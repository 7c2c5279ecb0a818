import { EndUser } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import type { AppContext } from '../../context.ts';

export const endUserFields = {
  externalId: { type: 'string', minLength: 1, maxLength: 255 },
  name: { type: 'string', minLength: 1, maxLength: 200 },
};

/** The space's end-user, or 404. */
export async function findEndUser(ctx: AppContext, id: string): Promise<EndUser> {
  const { org, space } = ctx.state.tenancy!;
  const row = await EndUser.query(ctx.services.knex).findOne({ id, org_id: org!.id, space_id: space!.id });
  if (!row) throw problem('not_found', 'No such end-user');
  return row;
}

export const endUserIdParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } as const;
