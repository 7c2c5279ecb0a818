// What a caller holds in a package's HOME space (SPEC 4.6: authority is the home space).
import type { Knex } from 'knex';
import { findSpace, spaceScopes } from '../identity/tenancy.ts';
import { intersect, type OrgRole, type Scope, SPACE_ROLE_SCOPES, type SpaceRole } from '../permissions.ts';

export interface Caller {
  orgId: string;
  userId: string;
  orgRole?: OrgRole;
  /** API key scopes: a ceiling on whatever the creator holds. */
  keyScopes?: readonly string[];
  /** X-View-As preview role. */
  viewAs?: SpaceRole;
}

const NONE: ReadonlySet<Scope> = new Set();

/** The caller's effective scopes in `spaceId` (empty without a role there), memoized per caller. */
export class SpaceAuthority {
  private readonly cache = new Map<string, Promise<ReadonlySet<Scope>>>();
  readonly knex: Knex;
  readonly caller: Caller;

  constructor(knex: Knex, caller: Caller) {
    this.knex = knex;
    this.caller = caller;
  }

  scopesIn(spaceId: string): Promise<ReadonlySet<Scope>> {
    let p = this.cache.get(spaceId);
    if (!p) {
      p = this.compute(spaceId);
      this.cache.set(spaceId, p);
    }
    return p;
  }

  async holds(spaceId: string, scope: Scope): Promise<boolean> {
    return (await this.scopesIn(spaceId)).has(scope);
  }

  /** True when the caller holds any role in the space. */
  async isMember(spaceId: string): Promise<boolean> {
    const space = await findSpace(this.knex, this.caller.orgId, spaceId);
    return space ? (await spaceScopes(this.knex, this.caller.userId, space, this.caller.orgRole)) !== null : false;
  }

  private async compute(spaceId: string): Promise<ReadonlySet<Scope>> {
    const { orgId, userId, orgRole, keyScopes, viewAs } = this.caller;
    const space = await findSpace(this.knex, orgId, spaceId);
    let held = space ? await spaceScopes(this.knex, userId, space, orgRole) : null;
    if (!held) return NONE;
    if (viewAs) held = intersect(SPACE_ROLE_SCOPES[viewAs], held);
    if (keyScopes) held = intersect(keyScopes as Scope[], held);
    return held;
  }
}
