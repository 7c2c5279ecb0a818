// How the identity resources look to API clients (SPEC 3, 5): users and sessions, organizations
// and their members and roles, spaces and their members, API keys, end-users. Each response
// schema beside the DTO that fills it (the row types are in shared/db/models.ts), so the routes,
// the console and the OpenAPI document present them one way.
import type { ApiKey, CustomRole, EndUser, Space } from '../db/models.ts';
import { SCOPES } from '../permissions.ts';
import { type JsonSchema, dateTime } from '../json-schema.ts';

export const userSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'email', 'name'],
  properties: { id: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' } },
};

export function userDto(u: { id: string; email: string; name: string }) {
  return { id: u.id, email: u.email, name: u.name };
}

export const sessionSchema: JsonSchema = {
  type: 'object',
  required: ['user', 'session'],
  properties: { user: userSchema, session: { type: 'object', properties: { expiresAt: dateTime } } },
};

export const orgSchema = {
  type: 'object',
  required: ['id', 'name', 'defaultSpaceId'],
  properties: {
    object: { const: 'organization' },
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    defaultSpaceId: { type: 'string' },
    role: { enum: ['owner', 'admin', 'member'] },
  },
};

export const orgMemberSchema = {
  type: 'object',
  required: ['object', 'userId', 'email', 'name', 'role'],
  properties: {
    object: { const: 'org_member' },
    userId: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    role: { enum: ['owner', 'admin', 'member'] },
    createdAt: { type: 'string', format: 'date-time' },
  },
};

export const customRoleSchema = {
  type: 'object',
  required: ['object', 'id', 'name', 'scopes'],
  properties: {
    object: { const: 'role' },
    id: { type: 'string' },
    name: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] } },
  },
};

export function customRoleDto(r: CustomRole) {
  return { object: 'role', id: r.id, name: r.name, scopes: r.scopes, createdAt: r.created_at.toISOString() };
}

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

export function spaceDto(s: Space) {
  return {
    object: 'space' as const,
    id: s.id,
    orgId: s.org_id,
    name: s.name,
    kind: s.kind,
    ownerUserId: s.owner_user_id,
    createdAt: s.created_at.toISOString(),
  };
}

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

export function spaceMemberDto(m: { user_id: string; preset_role: string | null; custom_role_id: string | null }) {
  return { object: 'space_member' as const, userId: m.user_id, preset_role: m.preset_role, custom_role_id: m.custom_role_id };
}

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

export function apiKeyDto(row: ApiKey) {
  return {
    object: 'api_key' as const,
    id: row.id,
    name: row.name,
    keyPrefix: row.key_prefix,
    scopes: row.scopes,
    spaceId: row.space_id,
    createdBy: row.created_by,
    expiresAt: row.expires_at?.toISOString() ?? null,
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  };
}

export function orgDto(org: { id: string; name: string; default_space_id: string }, role: string) {
  return { object: 'organization' as const, id: org.id, name: org.name, defaultSpaceId: org.default_space_id, role };
}

export function orgMemberDto(m: { user_id: string; email: string; name: string; role: string; created_at: Date }) {
  return { object: 'org_member' as const, userId: m.user_id, email: m.email, name: m.name, role: m.role, createdAt: m.created_at.toISOString() };
}

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
