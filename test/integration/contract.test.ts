// The contract of SPEC 7 and 8 on every operation the OpenAPI document describes: Request-Id,
// problem documents, RateLimit headers where a limit applies, Idempotency-Key refused exactly
// where the operation does not declare it, and the documented pagination style of each list.
import { expect } from 'chai';
import { newOrg, startTestApi, type TestApi } from '../support/api.ts';

interface Operation {
  method: string;
  path: string;
  op: any;
}

const SSE = (o: Operation) => Boolean(o.op.responses?.['200']?.content?.['text/event-stream']);
/** Remote-run sink routes open with a run's own secret: the owner's session is refused before any other check (remote-runs.test.ts covers them). */
const SINK = (o: Operation) => Boolean(o.op.security?.some((s: Record<string, unknown>) => 'sinkSecret' in s));
/** The authorization server's endpoints and pages (tag OIDC). */
const OAUTH_PROTOCOL = (o: Operation) => Boolean(o.op.tags?.includes('OIDC'));

describe('API contract (walking /api/openapi.json)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let owner: Awaited<ReturnType<typeof newOrg>>;
  let operations: Operation[];

  before(async () => {
    api = await startTestApi();
    owner = await newOrg(api, 'contract');
    const doc = (await owner.client.get('/api/openapi.json')).body;
    operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
    );
    expect(operations.length).to.be.greaterThan(60);
  });
  after(() => api.close());

  /** The path with every parameter filled with a value that names nothing. */
  const concrete = (path: string) =>
    path.replace(/\{([^}]+)\}/g, (_, name) => (name === 'scope' ? '@nobody' : name === 'orgId' ? '00000000-0000-4000-8000-000000000000' : 'none'));

  /** A request that cannot change anything: malformed JSON on writes, unknown ids everywhere. */
  function probe(o: Operation, headers: Record<string, string> = {}) {
    const write = o.method !== 'GET' && o.method !== 'DELETE';
    return owner.client.request(
      o.method,
      concrete(o.path),
      write ? { raw: '{"broken": ', headers: { 'content-type': 'application/json', ...headers } } : { headers },
    );
  }

  it('puts Request-Id on every answer and answers errors as problem documents', async () => {
    for (const o of operations.filter((x) => !SSE(x))) {
      const res = await probe(o);
      const where = `${o.method} ${o.path} -> ${res.status}`;
      expect(res.headers.get('request-id'), where).to.match(/^req_/);
      // The authorization server's protocol answers errors in OAuth's own formats (RFC 6749 JSON,
      // or an HTML page to a browser), as SPEC 5.5 says of its 429s.
      if (res.status >= 400 && !OAUTH_PROTOCOL(o)) {
        expect(res.headers.get('content-type'), where).to.match(/^application\/problem\+json/);
        expect(res.body.request_id, where).to.equal(res.headers.get('request-id'));
        expect(res.body.code, where).to.be.a('string');
      }
      if (o.op.security?.length) {
        const anon = await fetch(api.url + concrete(o.path), { method: o.method });
        expect(anon.status, `${o.method} ${o.path} without credentials`).to.equal(401);
        expect(anon.headers.get('content-type')).to.match(/^application\/problem\+json/);
      }
    }
  });

  it('sends RateLimit and RateLimit-Policy wherever a limit applies, as documented', async () => {
    for (const o of operations.filter((x) => !SSE(x) && !SINK(x))) {
      const limit = o.op['x-rate-limit'];
      if (!limit || limit.productionOnly) continue;
      const res = await probe(o);
      const where = `${o.method} ${o.path}`;
      expect(res.headers.get('ratelimit-policy'), where).to.equal(`${limit.points};w=${limit.duration}`);
      expect(res.headers.get('ratelimit'), where).to.match(new RegExp(`^limit=${limit.points}, remaining=\\d+, reset=\\d+$`));
    }
  });

  it('refuses Idempotency-Key exactly where the operation does not declare it', async () => {
    for (const o of operations.filter((x) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(x.method) && !x.path.startsWith('/api/auth/') && !SINK(x))) {
      const declared = (o.op.parameters ?? []).some((p: any) => p.in === 'header' && p.name === 'Idempotency-Key');
      const res = await probe(o, { 'Idempotency-Key': `contract-${o.method}-${o.path}` });
      const where = `${o.method} ${o.path} -> ${res.status} ${res.body?.code}`;
      if (declared) expect(res.body?.code, where).not.to.equal('idempotency_not_supported');
      else expect(res.body?.code, where).to.equal('idempotency_not_supported');
    }
    const declaring = operations.filter((o) => (o.op.parameters ?? []).some((p: any) => p.name === 'Idempotency-Key')).map((o) => `${o.method} ${o.path}`);
    expect(declaring).to.have.members([
      'POST /api/agents/{scope}/{name}/run',
      'POST /api/runs/inline',
      'POST /api/runs/remote',
      'POST /api/webhooks',
      'POST /api/oauth/clients',
      'POST /api/end-users',
    ]);
  });

  it('documents each list with its pagination style (SPEC 8.7)', () => {
    const queryOf = (method: string, path: string) =>
      (operations.find((o) => o.method === method && o.path === path)!.op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name);
    const styles: Record<string, string[]> = {
      '/api/runs': ['limit', 'offset'],
      '/api/agents/{scope}/{name}/runs': ['limit', 'offset'],
      '/api/runs/{id}/logs': ['since', 'limit'],
      '/api/end-users': ['limit', 'startingAfter', 'endingBefore'],
      '/api/webhooks/{id}/deliveries': ['limit', 'startingAfter'],
      '/api/schedules': ['limit', 'startingAfter', 'endingBefore'],
      '/api/schedules/{id}/runs': ['limit', 'offset'],
    };
    for (const [path, params] of Object.entries(styles)) expect(queryOf('GET', path), path).to.include.members(params);
  });
});
