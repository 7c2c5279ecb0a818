// Issue 30, the contract under an unmodified fuzzer: what schemathesis (all checks, no hooks, no
// accepted refusals; test/fuzz/unmodified.ts) found, each held here. Text Postgres cannot store
// is a 400 naming the field, not a 500; the document publishes that rule, the 502 of the two
// routes whose upstream is on the internet, the realtime frames as events, what X-Org-Id takes
// with an API key, the largest offset and sequence numbers; a missing required header is a 400
// even past the rate limit; a path parameter never takes a value a literal route claims.
import { expect } from 'chai';
import { makeAjv } from '../../shared/validation.ts';
import { uniqueScope } from '../fixtures/packages/build.ts';
import { type Client, newKey, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { agentManifest } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';

describe('The contract under an unmodified fuzzer (issue 30)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let key: Client;
  let doc: any;

  before(async () => {
    api = await startTestApi({ CREDENTIAL_PROXY_LIMITS: JSON.stringify({ rate_per_min: 2 }) });
    const org = await newOrg(api, 'fuzzed');
    key = (await newKey(api, org.client, { name: 'fuzzed' })).client;
    doc = (await key.get('/api/openapi.json')).body;
  });
  after(() => api?.close());

  const inline = (prompt: string, input: Record<string, unknown>) =>
    key.post('/api/runs/inline', { manifest: agentManifest({ name: `${uniqueScope('nul')}/agent`, input: { type: 'object' } }), prompt, input });

  describe('text Postgres cannot store', () => {
    it('refuses U+0000 in a body string with 400 naming the field (was 500)', async () => {
      const res = await inline('Summarize\u0000 this.', {});
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors[0]).to.include({ field: 'prompt', code: 'invalid_format' });
    });

    it('refuses an unpaired surrogate in a key, naming it escaped (was 500)', async () => {
      const res = await inline('Summarize.', { ['a\ud800']: 1 });
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors[0]).to.include({ field: 'input.a\\ud800', code: 'invalid_format' });
      // The problem document is storable text too: the key is shown escaped.
      expect(res.body.detail.isWellFormed() && res.body.errors[0].message.isWellFormed()).to.equal(true);
    });

    it('takes a surrogate pair and text around NUL-free escapes', async () => {
      const res = await key.post('/api/runs/inline/validate', {
        manifest: agentManifest({ name: `${uniqueScope('ok')}/agent`, input: { type: 'object' } }),
        prompt: 'Emoji \ud83d\ude00 and \\u0000 as text',
        input: {},
      });
      expect(res.status, res.text).to.equal(200);
    });

    it('refuses U+0000 in a query or path parameter, naming it (was 500)', async () => {
      const query = await key.get('/api/end-users?startingAfter=a%00b');
      expectProblem(query, 400, 'validation_failed');
      expect(query.body).to.include({ param: 'startingAfter' });
      const path = await key.get('/api/runs/run_a%00b');
      expectProblem(path, 400, 'validation_failed');
      expect(path.body.errors[0]).to.include({ field: 'id' });
    });

    it('refuses it where the authorization server would store it, and finds no client by it (was 500)', async () => {
      const register = await fetch(`${api.url}/api/auth/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['https://app.example/cb'], client_name: 'App\u0000' }),
      });
      expect(register.status).to.equal(400);
      expect(await register.json()).to.include({ error: 'invalid_client_metadata' });
      const token = await fetch(`${api.url}/api/auth/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=authorization_code&code=x&client_id=a%00b',
      });
      expect(token.status).to.equal(401);
      expect(await token.json()).to.include({ error: 'invalid_client' });
    });

    it('publishes the rule: request strings and keys match NUL_FREE, open values are StorableJson', () => {
      const body = doc.paths['/api/runs/inline'].post.requestBody.content['application/json'].schema;
      expect(body.properties.prompt.pattern).to.equal('^[^\\x00]*$');
      expect(body.properties.input).to.deep.include({
        propertyNames: { pattern: '^[^\\x00]*$' },
        additionalProperties: { $ref: '#/components/schemas/StorableJson' },
      });
      expect(doc.components.schemas.StorableJson.anyOf).to.have.length(4);
      const id = doc.paths['/api/runs/{id}'].get.parameters.find((p: any) => p.name === 'id');
      expect(id.schema).to.deep.include({ not: { enum: ['inline', 'remote'] } });
    });
  });

  it('registers the redirect URIs registration publishes, and only those (a `*` host was taken)', async () => {
    const register = (uri: string) =>
      fetch(`${api.url}/api/auth/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [uri] }),
      });
    const pattern = new RegExp(
      doc.paths['/api/auth/oauth2/register'].post.requestBody.content['application/json'].schema.properties.redirect_uris.items.pattern,
    );
    for (const uri of ['http://127.0.0.1:9/cb', 'http://[::1]:8080/cb', 'https://app.example/cb?x=1']) {
      expect(pattern.test(uri), uri).to.equal(true);
      expect((await register(uri)).status, uri).to.equal(201);
    }
    expect(pattern.test('https://app*.example/cb')).to.equal(false);
    const star = await register('https://app*.example/cb');
    expect(star.status).to.equal(400);
    expect(await star.json()).to.include({ error: 'invalid_redirect_uri' });
  });

  it('publishes the 502 of the routes whose upstream is on the internet', () => {
    for (const [path, method] of [
      ['/api/models/openrouter', 'get'],
      ['/api/packages/import-github', 'post'],
    ]) {
      expect(doc.paths[path][method].responses['502'].content['application/problem+json'], path).to.be.an('object');
    }
  });

  it('publishes X-Org-Id as any string, ignored with an API key (SPEC 5.2)', async () => {
    const header = doc.paths['/api/models'].get.parameters.find((p: any) => p.name === 'X-Org-Id');
    expect(header.schema).to.deep.equal({ type: 'string' });
    for (const value of ['', 'not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      const res = await key.get('/api/models', { headers: { 'X-Org-Id': value } });
      expect(res.status, `${JSON.stringify(value)}: ${res.text}`).to.equal(200);
    }
  });

  it('bounds offset and sequence numbers where the database would fail (was 500)', async () => {
    expectProblem(await key.get('/api/runs?offset=70569359861162655744'), 400, 'validation_failed');
    expectProblem(await key.get('/api/runs/run_none/logs?since=12697177790'), 400, 'validation_failed');
    const offset = doc.paths['/api/runs'].get.parameters.find((p: any) => p.name === 'offset');
    expect(offset.schema.maximum).to.equal(Number.MAX_SAFE_INTEGER);
  });

  it('answers a missing required header with 400 even past the rate limit (was 429)', async () => {
    const headers = { 'X-Integration-Id': '@none/api', 'X-Target': 'https://api.example.com/' };
    for (let i = 0; i < 3; i++) {
      const res = await key.get('/api/credential-proxy/proxy', { headers });
      expectProblem(res, 400, 'validation_failed');
      expect(res.body).to.include({ param: 'X-Session-Id' });
      expect(res.headers.get('ratelimit-policy')).to.equal('2;w=60');
    }
    const full = await key.get('/api/credential-proxy/proxy', { headers: { ...headers, 'X-Session-Id': 'cps_none' } });
    expectProblem(full, 429, 'rate_limited');
  });

  it('describes realtime frames as events whose data has a schema per event, and a live frame fits', async () => {
    const stream = doc.paths['/api/realtime/runs'].get.responses['200'].content['text/event-stream'].schema;
    const ping = stream.oneOf.find((f: any) => f.properties.event.const === 'ping');
    expect(ping.properties.data).to.include({ contentMediaType: 'application/json' });
    const abort = new AbortController();
    const res = await fetch(`${api.url}/api/realtime/runs`, { headers: { authorization: key.defaults.authorization }, signal: abort.signal });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    abort.abort();
    const frame = Object.fromEntries(
      text
        .split('\n\n')[0]
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
    );
    const ajv = makeAjv(false);
    expect(ajv.validate({ ...ping, properties: { ...ping.properties, data: { type: 'string' } } }, frame), JSON.stringify(frame)).to.equal(true);
    expect(ajv.validate(ping.properties.data.contentSchema, JSON.parse(frame.data)), frame.data).to.equal(true);
  });
});
