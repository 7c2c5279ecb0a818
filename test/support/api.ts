// Test helpers: an in-process API on the real stack, and a small HTTP client that speaks to
// it over real sockets.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { loadConfig } from '../../shared/config.ts';
import { createKnex } from '../../shared/db/knex.ts';
import { createLogger, type Logger } from '../../shared/log.ts';
import type { RouteDef } from '../../api/route.ts';
import { type ApiServer, startApiServer } from '../../api/server.ts';
import { stack } from './stack.ts';
import { TEST_SECRETS_KEY } from './worker.ts';

export interface TestApi extends ApiServer {
  knex: Knex;
}

/** Starts an API on a free port with the given environment on top of the test stack. */
export async function startTestApi(env: Record<string, string> = {}, extraRoutes: RouteDef[] = [], log?: Logger): Promise<TestApi> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', SECRETS_KEY: TEST_SECRETS_KEY, ...env });
  const s = stack();
  const server = await startApiServer(config, {
    databaseUrl: s.databaseUrl,
    temporalAddress: s.temporalAddress,
    log: log ?? createLogger(env.LOG_LEVEL ?? 'silent', 'api-test'),
    extraRoutes,
  });
  const knex = createKnex(s.databaseUrl, { min: 0, max: 2 });
  return {
    ...server,
    knex,
    async close() {
      await server.close();
      await knex.destroy();
    },
  };
}

export interface Res<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export class Client {
  cookie?: string;
  readonly base: string;
  readonly defaults: Record<string, string>;
  constructor(base: string, defaults: Record<string, string> = {}) {
    this.base = base;
    this.defaults = defaults;
  }

  with(headers: Record<string, string>): Client {
    const c = new Client(this.base, { ...this.defaults, ...headers });
    c.cookie = this.cookie;
    return c;
  }

  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<Res<T>> {
    const headers: Record<string, string> = { ...this.defaults, ...opts.headers };
    if (this.cookie) headers.cookie = this.cookie;
    let body: string | Buffer | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(this.base + path, { method, headers, body });
    const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('svc.session_token='));
    if (setCookie) this.cookie = setCookie.split(';')[0];
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, opts?: RequestOptions) {
    return this.request<T>('GET', path, opts);
  }
  post<T = any>(path: string, body?: unknown, opts: RequestOptions = {}) {
    return this.request<T>('POST', path, { ...opts, body });
  }
  patch<T = any>(path: string, body?: unknown, opts: RequestOptions = {}) {
    return this.request<T>('PATCH', path, { ...opts, body });
  }
  delete<T = any>(path: string, opts?: RequestOptions) {
    return this.request<T>('DELETE', path, opts);
  }
}

export const PASSWORD = 'correct horse battery';

export function uniqueEmail(tag = 'user'): string {
  return `${tag}-${randomBytes(5).toString('hex')}@example.com`;
}

/** Signs up a fresh user; the returned client carries the session cookie. */
export async function newUser(api: { url: string }, tag = 'user'): Promise<{ client: Client; userId: string; email: string }> {
  const client = new Client(api.url);
  const email = uniqueEmail(tag);
  const res = await client.post('/api/auth/sign-up/email', { email, password: PASSWORD, name: tag });
  if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${res.text}`);
  return { client, userId: res.body.user.id, email };
}

/** A signed-in owner with a fresh organization; `client` sends X-Org-Id and X-Space-Id of the default space. */
export async function newOrg(api: { url: string }, tag = 'owner') {
  const owner = await newUser(api, tag);
  const org = await owner.client.post('/api/orgs', { name: `${tag} org` });
  if (org.status !== 201) throw new Error(`org create failed: ${org.status} ${org.text}`);
  const client = owner.client.with({ 'X-Org-Id': org.body.id, 'X-Space-Id': org.body.defaultSpaceId });
  return { ...owner, client, orgId: org.body.id as string, defaultSpaceId: org.body.defaultSpaceId as string };
}

/** Adds a fresh user to the organization, with `spaceRole` in the default space. */
export async function newMember(api: { url: string }, org: { client: Client; orgId: string; defaultSpaceId: string }, spaceRole = 'member', tag = 'member') {
  const user = await newUser(api, tag);
  const add = await org.client.post(`/api/orgs/${org.orgId}/members`, { email: user.email, role: 'member' });
  if (add.status !== 201) throw new Error(`add member failed: ${add.status} ${add.text}`);
  if (spaceRole !== 'member') {
    const patch = await org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${user.userId}`, { preset_role: spaceRole });
    if (patch.status !== 200) throw new Error(`role change failed: ${patch.status} ${patch.text}`);
  }
  const client = user.client.with({ 'X-Org-Id': org.orgId, 'X-Space-Id': org.defaultSpaceId });
  return { ...user, client };
}

/** Creates an API key as `creator` in its current space; returns the raw key and a bearer client. */
export async function newKey(api: { url: string }, creator: Client, body: Record<string, unknown> = { name: 'test key' }) {
  const res = await creator.post('/api/api-keys', body);
  if (res.status !== 201) throw new Error(`key create failed: ${res.status} ${res.text}`);
  return { key: res.body.key as string, id: res.body.id as string, body: res.body, client: new Client(api.url, { authorization: `Bearer ${res.body.key}` }) };
}
