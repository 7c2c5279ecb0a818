// The console's pipeline, the API's own steps in the same order: the session (else the sign-in
// page), rate limit, tenancy from the URL's organization and space (the API's tenancy step, so a
// page shows exactly what the API would answer the same person), the page's permission, the
// form and its CSRF value, then the handler. What goes wrong becomes a page, never a problem
// document: 404 for anything the person cannot see, 403, 429, 500 with the request id.
import Router from '@koa/router';
import type Koa from 'koa';
import { User } from '../../shared/db/models.ts';
import { ProblemError, problem } from '../../shared/errors.ts';
import type { AppContext } from '../context.ts';
import { readForm } from '../html/form.ts';
import { authenticate } from '../middleware/authenticate.ts';
import { enforceRateLimit } from '../middleware/rate-limit.ts';
import { resolveTenancy, SPACE_ID } from '../middleware/tenancy.ts';
import type { RouteDef } from '../route.ts';
import { serveAsset } from './assets.ts';
import { consoleCsrf, consoleCsrfValid } from './forms.ts';
import { html } from './html.ts';
import { sendConsolePage } from './layout.ts';
import { type NavEntry, type PageContext, type PageDef, spaceBase } from './page.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const SPACE_PREFIX = '/orgs/:orgId/spaces/:spaceId';

/** The steps of the API's pipeline take a route definition: the console's pages as they see them. */
function asRoute(page: PageDef, over: Partial<RouteDef> = {}): RouteDef {
  return {
    method: page.method,
    path: `/console${page.path}`,
    operationId: 'consolePage',
    summary: '',
    tag: 'Console',
    auth: page.context === 'public' ? 'none' : 'session',
    context: page.context === 'space' ? 'space' : undefined,
    responses: {},
    handler() {},
    ...over,
  };
}

/** Nothing the person may see is here: the 404 page (as the API's 404, for ids of other tenants too). */
class NotFound extends Error {}

function navOf(pages: PageDef[]): NavEntry[] {
  return pages
    .filter((p) => p.nav && p.method === 'get' && p.context === 'space' && p.path.startsWith(`${SPACE_PREFIX}/`))
    .map((p) => ({ ...p.nav!, path: p.path.slice(SPACE_PREFIX.length + 1), scope: p.scope }))
    .sort((a, b) => a.order - b.order);
}

async function signIn(page: PageContext<any>): Promise<void> {
  const { ctx } = page;
  await authenticate(ctx, asRoute({ method: 'get', path: '', context: 'user', handler() {} }));
  const auth = ctx.state.auth!;
  if (auth.kind !== 'session') throw problem('forbidden', 'The console takes a signed-in session');
  const user = await User.query(ctx.services.knex).findById(auth.userId);
  if (!user) throw problem('unauthorized', 'The session is invalid or expired');
  page.user = { id: user.id, email: user.email, name: user.name };
  page.sessionId = auth.session.id;
}

/** The organization and space of the URL, through the API's tenancy step (X-Org-Id / X-Space-Id from the path). */
async function enterSpace(page: PageContext<any>, def: PageDef, nav: NavEntry[]): Promise<void> {
  const { ctx } = page;
  const { orgId, spaceId } = page.params as { orgId: string; spaceId: string };
  if (!UUID.test(orgId) || !SPACE_ID.test(spaceId)) throw new NotFound();
  ctx.request.headers['x-org-id'] = orgId;
  ctx.request.headers['x-space-id'] = spaceId;
  try {
    await resolveTenancy(ctx, asRoute(def, { scope: undefined }));
  } catch (err) {
    // Not a member of the organization, or of the space: as if neither existed.
    if (err instanceof ProblemError && ['forbidden', 'not_a_space_member', 'validation_failed'].includes(err.code)) throw new NotFound();
    throw err;
  }
  const t = ctx.state.tenancy!;
  page.space = { org: t.org!, space: t.space!, orgRole: t.orgRole!, scopes: t.scopes, base: spaceBase(t.org!.id, t.space!.id) };
  page.nav = nav.filter((n) => !n.scope || t.scopes.has(n.scope));
  if (def.scope && !t.scopes.has(def.scope))
    throw problem('forbidden', `This page needs the ${def.scope} permission in ${t.space!.name}; ask an admin of the space.`);
}

function signInLocation(ctx: AppContext): string {
  const next = ctx.method === 'GET' ? ctx.originalUrl : '';
  return next && next !== '/console' ? `/console/sign-in?next=${encodeURIComponent(next)}` : '/console/sign-in';
}

/** A page for what a handler threw. */
export function sendErrorPage(page: PageContext<any>, err: unknown): void {
  const { ctx } = page;
  if (err instanceof NotFound || (err instanceof ProblemError && err.code === 'not_found')) {
    sendConsolePage(page, {
      title: 'Not found',
      status: 404,
      body: html`<p class="lead">There is nothing at this address, or it is not yours to see.</p>
<p>Check the link, or go back to <a \
href="${page.space ? `${page.space.base}/runs` : '/console'}">${page.space ? 'the runs of this space' : 'your organizations'}</a>.\
</p>`,
    });
    return;
  }
  if (err instanceof ProblemError) {
    if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
    const titles: Record<number, string> = { 403: 'Not allowed', 429: 'Too many requests', 413: 'Too large', 415: 'Not a form' };
    sendConsolePage(page, {
      title: titles[err.status] ?? err.title,
      status: err.status,
      body: html`<p class="lead">${err.detail}</p>${err.retryAfter !== undefined ? html`<p>Try again in ${err.retryAfter} s.</p>` : ''}`,
    });
    return;
  }
  ctx.services.log.error({ err, requestId: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'console page failed');
  sendConsolePage(page, {
    title: 'Something went wrong',
    status: 500,
    body: html`<p class="lead">The page could not be shown. Try again; if it keeps failing, report it with the request \
id <code>${ctx.state.requestId}</code>.</p>`,
  });
}

function newPageContext(ctx: AppContext): PageContext<any> {
  const page: PageContext<any> = {
    ctx,
    params: ctx.params ?? {},
    query: ctx.query,
    form: new URLSearchParams(),
    nav: [],
    csrf: () => consoleCsrf(ctx, page.sessionId),
  };
  return page;
}

async function run(ctx: AppContext, def: PageDef, nav: NavEntry[]): Promise<void> {
  (ctx.state as { metricsRoute?: string }).metricsRoute = `/console${def.path}`;
  const page = newPageContext(ctx);
  try {
    if (def.context !== 'public') {
      try {
        await signIn(page);
      } catch (err) {
        if (!(err instanceof ProblemError && err.status === 401)) throw err;
        ctx.status = 303;
        return ctx.redirect(signInLocation(ctx));
      }
    }
    await enforceRateLimit(
      ctx,
      def.rateLimit
        ? asRoute(def, {
            method: def.rateLimit.key.split(' ')[0].toLowerCase() as RouteDef['method'],
            path: def.rateLimit.key.split(' ')[1],
            rateLimit: def.rateLimit.rule,
          })
        : asRoute(def),
    );
    if (def.context === 'space') await enterSpace(page, def, nav);
    if (def.method === 'post') {
      page.form = await readForm(ctx);
      if (!consoleCsrfValid(ctx, page.sessionId, page.form.get('csrf'))) {
        throw problem('forbidden', 'This form has expired. Go back, reload the page and try again.');
      }
    }
    await def.handler(page);
  } catch (err) {
    sendErrorPage(page, err);
  }
}

/**
 * The console's middleware: assets and pages under `/console`, every other path to `next`.
 * Mounted by api/app.ts beside the API's router, not in its route table: no OpenAPI entry, no
 * problem documents.
 */
export function consoleMiddleware(pages: PageDef[]): Koa.Middleware {
  const router = new Router();
  const nav = navOf(pages);
  for (const def of pages) {
    const full = def.path === '/' ? '/console' : `/console${def.path}`;
    router[def.method](full, (raw) => run(raw as unknown as AppContext, def, nav));
  }
  const routes = router.routes();
  return async (raw, next) => {
    if (raw.path !== '/console' && !raw.path.startsWith('/console/')) return next();
    const ctx = raw as unknown as AppContext;
    if (serveAsset(ctx)) return;
    await (routes as unknown as Koa.Middleware)(raw, async () => {});
    if (ctx.body === undefined && ctx.status !== 303 && ctx.status !== 302) {
      const page = newPageContext(ctx);
      // Signed in or not, an unknown address is the same 404 page.
      sendErrorPage(page, new NotFound());
    }
  };
}
