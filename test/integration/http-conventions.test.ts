// SPEC 2.1, 7, 9 and DESIGN.md: Request-Id, problem documents, Service-Version, CORS, discovery.
import { expect } from 'chai';
import { defineRoute } from '../../api/route.ts';
import { Client, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { expectProblem } from '../support/problem.ts';

describe('HTTP conventions', () => {
  let api: TestApi;
  let anon: Client;
  before(async () => {
    api = await startTestApi({ API_BODY_LIMIT_BYTES: '2048', TRUSTED_ORIGINS: 'https://app.example.com' });
    anon = new Client(api.url);
  });
  after(() => api.close());

  it('puts Request-Id on successes, errors and unknown routes', async () => {
    const ok = await anon.get('/api/health');
    expect(ok.headers.get('request-id')).to.match(/^req_[0-9A-Za-z]{24}$/);
    const missing = await anon.get('/api/no-such-route');
    expectProblem(missing, 404, 'not_found');
    expect(missing.body.detail).to.contain('/api/no-such-route');
    const ids = new Set([ok.headers.get('request-id'), missing.headers.get('request-id')]);
    expect(ids.size).to.equal(2);
  });

  it('answers 401 with a Bearer challenge when no credential is sent', async () => {
    const res = await anon.get('/api/auth/session');
    expectProblem(res, 401, 'unauthorized');
    expect(res.headers.get('www-authenticate')).to.equal('Bearer');
  });

  it('rejects malformed JSON, a wrong content type and an oversize body as problems', async () => {
    const malformed = await anon.request('POST', '/api/auth/sign-in/email', { raw: '{"email": ', headers: { 'content-type': 'application/json' } });
    expectProblem(malformed, 400, 'invalid_json');
    const wrongType = await anon.request('POST', '/api/auth/sign-in/email', {
      raw: 'email=a',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectProblem(wrongType, 415, 'unsupported_media_type');
    const big = await anon.post('/api/auth/sign-in/email', { email: 'a@example.com', password: 'x'.repeat(4096) });
    expectProblem(big, 413, 'payload_too_large');
  });

  it('reports validation failures field by field, naming the first in detail', async () => {
    const res = await anon.post('/api/auth/sign-up/email', { email: 'not-an-email', name: 42 });
    expectProblem(res, 400, 'validation_failed');
    const byField = Object.fromEntries(res.body.errors.map((e: any) => [e.field, e.code]));
    expect(byField).to.deep.include({ password: 'required', email: 'invalid_format', name: 'invalid_type' });
    for (const e of res.body.errors) expect(e.message).to.be.a('string').and.not.empty;
    expect(res.body.detail).to.equal(res.body.errors[0].message);
  });

  it('answers an unsupported method on a known path with 405', async () => {
    const res = await anon.request('PUT', '/api/orgs');
    expectProblem(res, 405, 'method_not_allowed');
  });

  it('answers OPTIONS and 405 with the methods of the literal path, not of an overlapping /:id one', async () => {
    const options = await anon.request('OPTIONS', '/api/api-keys/available-scopes');
    expect(options.status).to.equal(200);
    expect(options.headers.get('allow')).to.equal('HEAD, GET');
    const deleted = await anon.request('DELETE', '/api/api-keys/available-scopes');
    expectProblem(deleted, 405, 'method_not_allowed');
    expect(deleted.headers.get('allow')).to.equal('HEAD, GET');
    const byId = await anon.request('OPTIONS', '/api/api-keys/key_000000000000000000000000');
    expect(byId.headers.get('allow')).to.include('DELETE');
  });

  it('matches a path whatever its case and with a trailing slash, and answers 404 for a prefix no route has', async () => {
    // Routes are matched within the group of their first two segments (api/router.ts): the
    // matching itself must stay @koa/router's, case-insensitive and lenient on a trailing slash.
    for (const path of ['/API/Health', '/api/health/', '/LLMS.TXT']) expect((await anon.get(path)).status, path).to.equal(200);
    const keyByCase = await anon.request('OPTIONS', '/API/API-KEYS/AVAILABLE-SCOPES');
    expect(keyByCase.headers.get('allow')).to.equal('HEAD, GET');
    expectProblem(await anon.get('/nowhere/at/all'), 404, 'not_found');
    expectProblem(await anon.get('/api'), 404, 'not_found');
  });

  it('publishes a request body as required only where an absent one (read as {}) is refused', async () => {
    const doc = (await anon.get('/api/openapi.json')).body;
    expect(doc.paths['/api/auth/sign-up/email'].post.requestBody.required).to.equal(true);
    expect(doc.paths['/api/schedules/{id}'].patch.requestBody.required).to.equal(false);
  });

  it('echoes Service-Version on authenticated responses and refuses one it cannot serve', async () => {
    const { client } = await newOrg(api);
    const ok = await client.get('/api/me');
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('service-version')).to.equal('2026-03-21');
    const pinned = await client.get('/api/me', { headers: { 'Service-Version': '2026-03-21' } });
    expect(pinned.headers.get('service-version')).to.equal('2026-03-21');
    const bad = await client.get('/api/me', { headers: { 'Service-Version': '2024-01-01' } });
    expectProblem(bad, 400, 'unsupported_api_version');
    expect(bad.body.param).to.equal('Service-Version');
  });

  it('refuses an organization pinned to a version this server cannot serve, never falling back', async () => {
    const { client, orgId } = await newOrg(api);
    await api.knex('organizations').where({ id: orgId }).update({ api_version: '2025-01-01' });
    const res = await client.get('/api/me');
    expectProblem(res, 400, 'unsupported_api_version');
    expect(res.body.detail).to.contain('2025-01-01');
    const withHeader = await client.get('/api/me', { headers: { 'Service-Version': '2026-03-21' } });
    expect(withHeader.status).to.equal(200);
  });

  it('sends CORS headers to trusted origins only, exposing the contract headers', async () => {
    const trusted = await anon.get('/api/health', { headers: { Origin: 'https://app.example.com' } });
    expect(trusted.headers.get('access-control-allow-origin')).to.equal('https://app.example.com');
    const exposed = (trusted.headers.get('access-control-expose-headers') ?? '').split(',');
    for (const h of ['Request-Id', 'Service-Version', 'RateLimit', 'RateLimit-Policy', 'Link', 'ETag', 'Retry-After', 'Idempotent-Replayed']) {
      expect(exposed).to.include(h);
    }
    const preflight = await anon.request('OPTIONS', '/api/me', {
      headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-org-id' },
    });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers.get('access-control-allow-credentials')).to.equal('true');
    const stranger = await anon.get('/api/health', { headers: { Origin: 'https://evil.example.com' } });
    expect(stranger.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('serves the OpenAPI 3.1 document with a strong ETag and 304 on If-None-Match', async () => {
    const res = await anon.get('/api/openapi.json');
    expect(res.status).to.equal(200);
    expect(res.body.openapi).to.equal('3.1.0');
    const etag = res.headers.get('etag')!;
    expect(etag).to.match(/^"[^"]+"$/);
    expect(res.body.paths['/api/api-keys'].post.requestBody.content['application/json'].schema.required).to.deep.equal(['name']);
    expect(res.body.paths['/api/auth/bootstrap/redeem'].post['x-rate-limit']).to.deep.include({ points: 5, duration: 60, by: 'ip' });
    const again = await anon.get('/api/openapi.json', { headers: { 'If-None-Match': etag } });
    expect(again.status).to.equal(304);
    expect(again.text).to.equal('');
    const stale = await anon.get('/api/openapi.json', { headers: { 'If-None-Match': '"stale"' } });
    expect(stale.status).to.equal(200);
  });

  it('publishes the same schema the route enforces', async () => {
    const doc = (await anon.get('/api/openapi.json')).body;
    const schema = doc.paths['/api/auth/sign-up/email'].post.requestBody.content['application/json'].schema;
    expect(schema.required).to.have.members(['email', 'password', 'name']);
    expect(schema.properties.password.minLength).to.equal(8);
    const short = await anon.post('/api/auth/sign-up/email', { email: 'a@example.com', password: 'short', name: 'A' });
    expectProblem(short, 400, 'validation_failed');
    expect(short.body.errors[0]).to.include({ field: 'password', code: 'out_of_range' });
  });

  it('serves the interactive reference from local files, llms.txt and error pages', async () => {
    const page = await anon.get('/api/docs');
    expect(page.status).to.equal(200);
    expect(page.text).to.contain('/api/docs/assets/swagger-ui-bundle.js');
    expect(page.text).not.to.match(/https?:\/\/(?!localhost)/);
    const bundle = await anon.get('/api/docs/assets/swagger-ui-bundle.js');
    expect(bundle.status).to.equal(200);
    expect(bundle.text.length).to.be.greaterThan(100_000);
    const llms = await anon.get('/llms.txt');
    expect(llms.status).to.equal(200);
    expect(llms.text).to.match(/^# Agent Execution Service/);
    expect(llms.text).to.contain('`POST /api/api-keys`');
    const errorPage = await anon.get('/api/docs/errors/personal-space-takes-no-keys');
    expect(errorPage.status).to.equal(200);
    expect(errorPage.text).to.contain('HTTP 409');
  });

  it('reports Postgres and Temporal reachability on /api/health', async () => {
    const res = await anon.get('/api/health');
    expect(res.status).to.equal(200);
    expect(res.body.status).to.equal('ok');
    expect(res.body.postgres.ok).to.equal(true);
    expect(res.body.temporal.ok).to.equal(true);
  });
});

describe('a thrown bug', () => {
  it('becomes 500 internal_error without a stack or the message in the body', async () => {
    const boom = defineRoute({
      method: 'get',
      path: '/api/test/boom',
      operationId: 'boom',
      summary: 'throws',
      tag: 'Test',
      auth: 'none',
      responses: {},
      handler() {
        throw new Error('secret internals at /srv/app.ts:42');
      },
    });
    const api = await startTestApi({}, [boom]);
    try {
      const res = await new Client(api.url).get('/api/test/boom');
      expectProblem(res, 500, 'internal_error');
      expect(res.text).not.to.contain('secret internals');
      expect(res.text).not.to.contain('app.ts');
    } finally {
      await api.close();
    }
  });
});
