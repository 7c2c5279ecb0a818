// The request's context as every layer of the API sees it: what the pipeline (api/router.ts)
// has established about the caller, and the injected services. Types only, and importing none
// of the modules that take a context, so nothing that reads a request is in an import cycle
// with the services it uses (issue 29).
import type { Context } from 'koa';
import type { ApiKey, Organization, Session, Space } from '../shared/db/models.ts';
import type { ClientLevel } from '../shared/oidc/clients.ts';
import type { OrgRole, Scope, SpaceRole } from '../shared/permissions.ts';
import type { RunRow } from '../shared/runs/model.ts';
import type { AccessView } from './access-cache.ts';
import type { Services } from './services.ts';

/**
 * An OIDC access token (SPEC 5.5). `userId` is whose authority it carries: the signed-in user
 * (instance, org), or for a space-level token the person who made the client, as an API key
 * carries its creator's; the end-user is then who acts.
 */
export interface OidcToken {
  kind: 'oidc';
  userId: string;
  level: ClientLevel;
  clientId: string;
  /** The permissions the token carries: a ceiling on what `userId` holds. */
  scopes: Scope[];
  /** Bound context: the organization (org, space level) and the space and end-user (space level). */
  orgId?: string;
  spaceId?: string;
  endUserId?: string;
  expiresAt: Date;
}

export type AuthState = { kind: 'session'; userId: string; session: Session } | { kind: 'api_key'; userId: string; key: ApiKey } | OidcToken;

export interface TenancyState {
  org?: Organization;
  orgRole?: OrgRole;
  space?: Space;
  /** Effective permissions in the route's context. */
  scopes: ReadonlySet<Scope>;
  /** Service-User: the end-user the API key acts for. */
  endUserId?: string;
  viewAs?: SpaceRole;
}

export interface RouteState {
  requestId: string;
  rawBody?: Buffer;
  auth?: AuthState;
  tenancy?: TenancyState;
  /** Credential and membership lookups for this request (api/access-cache.ts). */
  access?: AccessView;
  /** The remote run a sink secret opened (`auth: 'sink'` routes). */
  sinkRun?: RunRow;
}

export type AppContext = Context & { state: RouteState; services: Services };
