// How an OAuth client looks to API clients (`/api/oauth/clients`): its response schema beside
// the DTO that fills it (the row is `OAuthClientRow`, clients.ts). The secret is never in the
// DTO: the create route adds it, once.
import type { OAuthClientRow } from './clients.ts';

export function clientDto(row: OAuthClientRow) {
  return {
    id: row.id,
    client_id: row.client_id,
    name: row.name,
    level: row.level,
    orgId: row.org_id,
    spaceId: row.space_id,
    redirect_uris: row.redirect_uris,
    scopes: row.scopes,
    allowSignup: row.allow_signup,
    public: row.client_secret_sealed === null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export const clientSchema = {
  type: 'object',
  required: ['id', 'client_id', 'name', 'level', 'orgId', 'spaceId', 'redirect_uris', 'scopes', 'allowSignup', 'public', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', pattern: '^oac_' },
    client_id: { type: 'string' },
    client_secret: { type: 'string', description: 'Returned on create only, and only to a confidential client' },
    name: { type: 'string' },
    level: { enum: ['instance', 'org', 'space'] },
    orgId: { type: ['string', 'null'], description: 'The managing organization' },
    spaceId: { type: ['string', 'null'] },
    redirect_uris: { type: 'array', items: { type: 'string' } },
    scopes: { type: 'array', items: { type: 'string' } },
    allowSignup: { type: 'boolean' },
    public: { type: 'boolean', description: 'No secret: token_endpoint_auth_method none, PKCE only' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};
