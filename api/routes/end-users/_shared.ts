import { EndUser } from '../../../shared/db/models.ts';
import { problem } from '../../../shared/errors.ts';
import type { AppContext } from '../../context.ts';

export const endUserSchema = {
  type: 'object',
  required: ['object', 'id', 'externalId', 'name', 'spaceId', 'createdAt'],
  properties: {
    object: { const: 'end_user' },
    id: { type: 'string', pattern: '^eu_' },
    externalId: { type: 'string' },
    name: { type: 'string' },
    spaceId: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

export const endUserFields = {
  externalId: { type: 'string', minLength: 1, maxLength: 255 },
  name: { type: 'string', minLength: 1, maxLength: 200 },
};

export function endUserDto(e: EndUser) {
  return {
    object: 'end_user' as const,
    id: e.id,
    externalId: e.external_id,
    name: e.name,
    spaceId: e.space_id,
    createdAt: e.created_at.toISOString(),
    updatedAt: e.updated_at.toISOString(),
  };
}

/** The space's end-user, or 404. */
export async function findEndUser(ctx: AppContext, id: string): Promise<EndUser> {
  const { org, space } = ctx.state.tenancy!;
  const row = await EndUser.query(ctx.services.knex).findOne({ id, org_id: org!.id, space_id: space!.id });
  if (!row) throw problem('not_found', 'No such end-user');
  return row;
}

export const endUserIdParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } as const;
