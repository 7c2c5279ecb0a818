// Scopes (SPEC 2.3) and the one role-to-scope table (DESIGN.md section 5, README).

export const SCOPES = [
  'agents:read',
  'agents:write',
  'agents:configure',
  'agents:delete',
  'agents:run',
  'skills:read',
  'skills:write',
  'skills:delete',
  'mcp-servers:read',
  'mcp-servers:write',
  'mcp-servers:delete',
  'integrations:read',
  'integrations:write',
  'integrations:delete',
  'integrations:install',
  'integrations:uninstall',
  'integrations:connect',
  'integrations:disconnect',
  'runs:read',
  'runs:read-all',
  'runs:cancel',
  'runs:delete',
  'files:read',
  'files:delete',
  'schedules:read',
  'schedules:write',
  'schedules:delete',
  'models:read',
  'models:write',
  'models:delete',
  'proxies:read',
  'proxies:write',
  'proxies:delete',
  'spaces:read',
  'spaces:write',
  'spaces:delete',
  'end-users:read',
  'end-users:write',
  'end-users:delete',
  'credential-proxy:call',
  'llm-proxy:call',
  'webhooks:read',
  'webhooks:write',
  'webhooks:delete',
  'oauth-clients:read',
  'oauth-clients:write',
  'oauth-clients:delete',
  'mcp:read',
  'mcp:invoke',
  'org-webhooks:read',
  'org-webhooks:write',
  'org-webhooks:delete',
  // Held through roles only; never carried by an API key (SPEC 2.3: api-keys:* not grantable).
  'api-keys:create',
  'api-keys:read',
  'api-keys:delete',
] as const;

export type Scope = (typeof SCOPES)[number];

const SCOPE_SET: ReadonlySet<string> = new Set(SCOPES);
export function isScope(value: string): value is Scope {
  return SCOPE_SET.has(value);
}

/**
 * Scopes no API key can carry: key management itself, and organization-level webhooks, which
 * SPEC 4.9 makes session-only. Asking for one is 400 `invalid_request`.
 */
export const NON_KEY_SCOPES: ReadonlySet<Scope> = new Set<Scope>([
  'api-keys:create',
  'api-keys:read',
  'api-keys:delete',
  'org-webhooks:read',
  'org-webhooks:write',
  'org-webhooks:delete',
]);

export const KEY_GRANTABLE_SCOPES: readonly Scope[] = SCOPES.filter((s) => !NON_KEY_SCOPES.has(s));

/** Scopes that live at organization level: routes that take `X-Org-Id` only check these. */
export const ORG_LEVEL_SCOPES: ReadonlySet<Scope> = new Set<Scope>([
  'models:read',
  'models:write',
  'models:delete',
  'proxies:read',
  'proxies:write',
  'proxies:delete',
  'org-webhooks:read',
  'org-webhooks:write',
  'org-webhooks:delete',
  'oauth-clients:read',
  'oauth-clients:write',
  'oauth-clients:delete',
]);

export const SPACE_ROLES = ['admin', 'builder', 'member', 'viewer'] as const;
export type SpaceRole = (typeof SPACE_ROLES)[number];
export const ORG_ROLES = ['owner', 'admin', 'member'] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

const READ: Scope[] = [
  'agents:read',
  'skills:read',
  'mcp-servers:read',
  'integrations:read',
  'runs:read',
  'files:read',
  'schedules:read',
  'spaces:read',
  'end-users:read',
  'webhooks:read',
  'mcp:read',
];

/** Space roles: what each preset grants inside one space. */
export const SPACE_ROLE_SCOPES: Record<SpaceRole, ReadonlySet<Scope>> = {
  viewer: new Set<Scope>([...READ, 'runs:read-all']),
  member: new Set<Scope>([...READ, 'agents:run', 'runs:cancel', 'integrations:connect', 'integrations:disconnect', 'mcp:invoke']),
  builder: new Set<Scope>([
    ...READ,
    'agents:write',
    'agents:configure',
    'agents:run',
    'skills:write',
    'mcp-servers:write',
    'integrations:write',
    'integrations:install',
    'integrations:connect',
    'integrations:disconnect',
    'runs:read-all',
    'runs:cancel',
    'schedules:write',
    'end-users:write',
    'webhooks:write',
    'credential-proxy:call',
    'llm-proxy:call',
    'mcp:invoke',
    'api-keys:create',
    'api-keys:read',
    'api-keys:delete',
  ]),
  admin: new Set<Scope>(SCOPES.filter((s) => !ORG_LEVEL_SCOPES.has(s))),
};

/** Organization roles: what each grants at organization level. */
export const ORG_ROLE_SCOPES: Record<OrgRole, ReadonlySet<Scope>> = {
  owner: ORG_LEVEL_SCOPES,
  admin: ORG_LEVEL_SCOPES,
  member: new Set<Scope>(['models:read', 'proxies:read']),
};

export function intersect(a: Iterable<Scope>, b: ReadonlySet<Scope>): Set<Scope> {
  const out = new Set<Scope>();
  for (const s of a) if (b.has(s)) out.add(s);
  return out;
}

export function isSubset(a: Iterable<Scope>, b: ReadonlySet<Scope>): boolean {
  for (const s of a) if (!b.has(s)) return false;
  return true;
}
