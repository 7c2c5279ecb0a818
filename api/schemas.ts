// Schemas shared by several routes; each is published once under components in OpenAPI.
import { SCOPES, ORG_ROLES, SPACE_ROLES } from '../shared/permissions.ts';
export { dateTime } from '../shared/json-schema.ts';
import type { JsonSchema } from './route.ts';

export const email = { type: 'string', format: 'email', maxLength: 254 } as const;
export const password = { type: 'string', minLength: 8, maxLength: 256 } as const;
export const name = { type: 'string', minLength: 1, maxLength: 200 } as const;
export const scope = { type: 'string', enum: [...SCOPES] } as const;
export const orgRole = { type: 'string', enum: [...ORG_ROLES] } as const;
export const spaceRole = { type: 'string', enum: [...SPACE_ROLES] } as const;

export const problemSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'instance', 'code', 'request_id'],
  properties: {
    type: { type: 'string', format: 'uri' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
    code: { type: 'string' },
    request_id: { type: 'string', pattern: '^req_' },
    param: { type: 'string' },
    retry_after: { type: 'integer' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'code', 'message'],
        properties: { field: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
};

/** SPEC 2.1 list envelope. */
export function listOf(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['object', 'data', 'hasMore'],
    properties: { object: { const: 'list' }, data: { type: 'array', items: item }, hasMore: { type: 'boolean' } },
  };
}
