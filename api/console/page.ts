// A console page is one file exporting `definePage({...})`, as an API route is one file exporting
// `defineRoute`. The definition says who may open it (anyone, a signed-in person, or a person
// holding `scope` in the organization and space its URL names); `router.ts` runs the same
// authentication and tenancy steps as the API's pipeline before the handler, checks the CSRF
// value of every POST, and turns what a handler throws into a page (README.md).
import type { Organization, Space, User } from '../../shared/db/models.ts';
import type { OrgRole, Scope } from '../../shared/permissions.ts';
import type { AppContext } from '../context.ts';
import type { RateLimitRule } from '../rate-limiters.ts';

export type PageMethod = 'get' | 'post';

/** Where a page sits: `public` (sign-in), `user` (any signed-in person), `space` (`/orgs/:orgId/spaces/:spaceId/...`). */
export type PageContextKind = 'public' | 'user' | 'space';

/** The organization and space a space page's URL names, and what the person holds there. */
export interface SpaceView {
  org: Organization;
  space: Space;
  orgRole: OrgRole;
  /** Effective permissions in the space, as the API computes them for the same person. */
  scopes: ReadonlySet<Scope>;
  /** `/console/orgs/<org>/spaces/<space>`: every link of the space starts here. */
  base: string;
}

/** An entry of the space navigation, declared by the page it leads to. */
export interface NavEntry {
  label: string;
  /** Path under the space's base, e.g. `runs`. */
  path: string;
  order: number;
  /** Shown only to people holding it. */
  scope?: Scope;
}

export interface PageContext<P = Record<string, string>> {
  ctx: AppContext;
  params: P;
  query: Record<string, string | string[] | undefined>;
  /** POST pages: the submitted form, its CSRF value already checked. */
  form: URLSearchParams;
  /** Signed-in pages. */
  user?: Pick<User, 'id' | 'email' | 'name'>;
  sessionId?: string;
  /** Space pages. */
  space?: SpaceView;
  /** The space navigation (entries the person may use). */
  nav: NavEntry[];
  /** The CSRF value every form of this page carries (forms.ts `csrfField`). */
  csrf(): string;
}

export interface PageDef<P = any> {
  method: PageMethod;
  /** Under `/console`, Koa style: `/orgs/:orgId/spaces/:spaceId/runs/:runId`. */
  path: string;
  context: PageContextKind;
  /** Space pages: the permission needed (otherwise the 403 page). */
  scope?: Scope;
  /** The space navigation entry leading to this (GET) page. */
  nav?: Omit<NavEntry, 'path' | 'scope'>;
  /**
   * The limit of the API operation the page does the same as, counted on the same counter
   * (`key`: that route's `METHOD /path`), so a person gets the same allowance through either
   * door. Pages without one count under the API's default for reads or writes.
   */
  rateLimit?: { key: string; rule: RateLimitRule };
  handler(page: PageContext<P>): Promise<void> | void;
}

export function definePage<P = Record<string, string>>(def: PageDef<P>): PageDef<P> {
  return def;
}

/** The base of a space's pages. */
export function spaceBase(orgId: string, spaceId: string): string {
  return `/console/orgs/${encodeURIComponent(orgId)}/spaces/${encodeURIComponent(spaceId)}`;
}

/** Answers with a redirect after a form (303: the browser follows with a GET). */
export function redirect(page: PageContext, location: string): void {
  page.ctx.status = 303;
  page.ctx.redirect(location);
}
