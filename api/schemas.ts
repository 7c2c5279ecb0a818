// Schemas shared by several routes; each is published once under components in OpenAPI.
import { SCOPES, ORG_ROLES, SPACE_ROLES } from '../shared/permissions.ts';
import type { JsonSchema } from './route.ts';

export const email = { type: 'string', format: 'email', maxLength: 254 } as const;
export const password = { type: 'string', minLength: 8, maxLength: 256 } as const;
export const name = { type: 'string', minLength: 1, maxLength: 200 } as const;
export const scope = { type: 'string', enum: [...SCOPES] } as const;
export const orgRole = { type: 'string', enum: [...ORG_ROLES] } as const;
export const spaceRole = { type: 'string', enum: [...SPACE_ROLES] } as const;
export const dateTime = { type: 'string', format: 'date-time' } as const;

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

export const userSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'email', 'name'],
  properties: { id: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' } },
};

export const sessionSchema: JsonSchema = {
  type: 'object',
  required: ['user', 'session'],
  properties: { user: userSchema, session: { type: 'object', properties: { expiresAt: dateTime } } },
};

export const spaceSchema: JsonSchema = {
  type: 'object',
  required: ['object', 'id', 'orgId', 'name', 'kind'],
  properties: {
    object: { const: 'space' },
    id: { type: 'string', pattern: '^spc_' },
    orgId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    kind: { enum: ['default', 'team', 'personal'] },
    ownerUserId: { type: ['string', 'null'] },
    createdAt: dateTime,
  },
};

export const spaceMemberSchema: JsonSchema = {
  type: 'object',
  required: ['object', 'userId', 'preset_role', 'custom_role_id'],
  properties: {
    object: { const: 'space_member' },
    userId: { type: 'string' },
    preset_role: { type: ['string', 'null'] },
    custom_role_id: { type: ['string', 'null'] },
  },
};

export const apiKeySchema: JsonSchema = {
  type: 'object',
  required: ['object', 'id', 'name', 'keyPrefix', 'scopes', 'expiresAt', 'createdAt'],
  properties: {
    object: { const: 'api_key' },
    id: { type: 'string' },
    key: { type: 'string', pattern: '^svc_[0-9A-Za-z]{36}$', description: 'Returned once, at creation.' },
    keyPrefix: { type: 'string' },
    name: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string' } },
    spaceId: { type: 'string' },
    createdBy: { type: 'string' },
    expiresAt: { type: ['string', 'null'], format: 'date-time' },
    lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
    createdAt: dateTime,
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

export function userDto(u: { id: string; email: string; name: string }) {
  return { id: u.id, email: u.email, name: u.name };
}
