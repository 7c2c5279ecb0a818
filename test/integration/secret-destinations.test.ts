// Issue 28, hole 4 (DESIGN.md 5): a stored secret goes only where it was sent with. Someone who
// may write a model, a provider credential, a proxy or an integration, but never read the secret,
// must not be able to send it to a host of their own: a new `baseUrl` or `provider` needs
// `apiKey` in the same request; a proxy's URL carries its own credentials; a connection's
// credential goes only to the authorized_uris of the integration version it was made under, until
// its owner reconnects. Each "attacker's host" is a local server that records what reaches it.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { zip } from '../fixtures/packages/build.ts';
import { type Client, newOrg, newUser, type Res } from '../support/api.ts';
import { type RecordedRequest, toolCall } from '../support/fake-model.ts';
import { ForwardProxy } from '../support/forward-proxy.ts';
import { agentManifest, uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { type RunServices, startRunServices } from '../support/run-services.ts';

const MODEL_KEY = `sk-model-${randomBytes(8).toString('hex')}`;
const CRED_KEY = `sk-cred-${randomBytes(8).toString('hex')}`;
const OWN_KEY = `sk-attackers-own-${randomBytes(8).toString('hex')}`;
const PROXY_PASSWORD = `pr0xy-${randomBytes(8).toString('hex')}`;
const TOKEN = `conn-token-${randomBytes(8).toString('hex')}`;
const STORED_SECRETS = [MODEL_KEY, CRED_KEY, PROXY_PASSWORD, TOKEN];

interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** A host that answers like a provider (a completion and a models list at once) and records every request. */
class Recorder {
  readonly hits: Hit[] = [];
  private server?: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        this.hits.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'x', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'p' } }], data: [{ id: 'm' }] }));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Every header of every request, as one text to search. */
  seen(): string {
    return this.hits.map((h) => `${h.method} ${h.url}\n${JSON.stringify(h.headers)}`).join('\n');
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** The organization's model `id` as listed. */
async function listedModel(client: Client, id: string): Promise<Record<string, unknown>> {
  const res = await client.get('/api/models');
  expect(res.status, res.text).to.equal(200);
  return (res.body.data as Array<Record<string, unknown>>).find((m) => m.id === id)!;
}

function expectApiKeyRequired(res: Res): void {
  expectProblem(res, 400, 'validation_failed');
  expect(res.body.errors).to.have.length(1);
  expect(res.body.errors[0]).to.include({ field: 'apiKey', code: 'required' });
}

describe('stored secrets go only where they were sent with', function () {
  this.timeout(120_000);
  let services: RunServices;
  let provider: Recorder;
  let attacker: Recorder;
  let org: Awaited<ReturnType<typeof newOrg>>;
  /** An organization admin: may write models, credentials and proxies, never read a key. */
  let admin: Client;

  before(async () => {
    provider = await new Recorder().start();
    attacker = await new Recorder().start();
    services = await startRunServices({ output: { done: true } });
    org = await newOrg(services.api, 'destinations');
    const user = await newUser(services.api, 'dest-admin');
    const add = await org.client.post(`/api/orgs/${org.orgId}/members`, { email: user.email, role: 'admin' });
    expect(add.status, add.text).to.equal(201);
    admin = user.client.with({ 'X-Org-Id': org.orgId, 'X-Space-Id': org.defaultSpaceId });
  });
  after(async () => {
    await services?.stop();
    await provider?.stop();
    await attacker?.stop();
  });
  beforeEach(() => {
    attacker.hits.length = 0;
  });
  afterEach(() => {
    for (const s of STORED_SECRETS) expect(attacker.seen(), "a stored secret reached the attacker's host").not.to.contain(s);
  });

  describe('models and model provider credentials', () => {
    it("a model's baseUrl or provider changes only with apiKey; the stored key never reaches the new host", async () => {
      const created = await org.client.post('/api/models', {
        name: 'guarded',
        provider: 'openai-compatible',
        baseUrl: provider.url,
        model: 'm',
        apiKey: MODEL_KEY,
      });
      expect(created.status, created.text).to.equal(201);
      const id = created.body.id as string;

      expectApiKeyRequired(await admin.patch(`/api/models/${id}`, { baseUrl: attacker.url }));
      expectApiKeyRequired(await admin.patch(`/api/models/${id}`, { baseUrl: `${attacker.url}/v1`, name: 'renamed' }));
      expectApiKeyRequired(await admin.patch(`/api/models/${id}`, { provider: 'anthropic' }));
      // Nothing changed, and the saved model still calls its own provider with its key.
      expect(await listedModel(admin, id)).to.include({ name: 'guarded', baseUrl: provider.url, provider: 'openai-compatible' });
      const test = await admin.post(`/api/models/${id}/test`, {});
      expect(test.body, test.text).to.include({ ok: true });
      expect(provider.hits.at(-1)?.headers.authorization).to.equal(`Bearer ${MODEL_KEY}`);
      expect(attacker.hits).to.have.length(0);

      // Restating the same destination (or changing anything else) needs no key.
      const same = await admin.patch(`/api/models/${id}`, { baseUrl: `${provider.url}/`, provider: 'openai-compatible', name: 'guarded-2' });
      expect(same.status, same.text).to.equal(200);

      // With its key in the same request the move is accepted: the new host gets that key only.
      const moved = await admin.patch(`/api/models/${id}`, { baseUrl: attacker.url, apiKey: OWN_KEY });
      expect(moved.status, moved.text).to.equal(200);
      expect(moved.body).to.include({ baseUrl: attacker.url, hasApiKey: true });
      expect((await admin.post(`/api/models/${id}/test`, {})).body).to.include({ ok: true });
      expect(attacker.hits).to.have.length(1);
      expect(attacker.hits[0].headers.authorization).to.equal(`Bearer ${OWN_KEY}`);
    });

    it("a credential's baseUrl or provider changes only with apiKey; neither it nor its models send the key elsewhere", async () => {
      const cred = await org.client.post('/api/model-provider-credentials', {
        name: 'guarded cred',
        provider: 'openai-compatible',
        baseUrl: provider.url,
        apiKey: CRED_KEY,
      });
      expect(cred.status, cred.text).to.equal(201);
      const model = await org.client.post('/api/models', { name: 'on cred', model: 'm', credentialId: cred.body.id });
      expect(model.status, model.text).to.equal(201);
      const path = `/api/model-provider-credentials/${cred.body.id}`;

      expectApiKeyRequired(await admin.patch(path, { baseUrl: attacker.url }));
      expectApiKeyRequired(await admin.patch(path, { provider: 'anthropic', name: 'renamed' }));
      // A model on a credential takes its destination from it: it cannot move alone.
      const alone = await admin.patch(`/api/models/${model.body.id}`, { baseUrl: attacker.url });
      expectProblem(alone, 400, 'validation_failed');
      expect(alone.body.errors[0]).to.include({ field: 'baseUrl' });

      const before = provider.hits.length;
      expect((await admin.post(`${path}/test`, {})).body).to.include({ ok: true });
      expect((await admin.post(`/api/models/${model.body.id}/test`, {})).body).to.include({ ok: true });
      expect((await admin.post('/api/model-provider-credentials/discover', { credentialId: cred.body.id })).status).to.equal(200);
      expect(provider.hits.slice(before).map((h) => h.headers.authorization)).to.deep.equal(Array(3).fill(`Bearer ${CRED_KEY}`));
      expect(attacker.hits).to.have.length(0);

      const moved = await admin.patch(path, { baseUrl: attacker.url, apiKey: OWN_KEY });
      expect(moved.status, moved.text).to.equal(200);
      expect(await listedModel(admin, model.body.id)).to.include({ baseUrl: attacker.url });
      expect((await admin.post(`/api/models/${model.body.id}/test`, {})).body).to.include({ ok: true });
      expect(attacker.hits.map((h) => h.headers.authorization)).to.deep.equal([`Bearer ${OWN_KEY}`]);
    });
  });

  describe('proxies', () => {
    let legit: ForwardProxy;
    let rogue: ForwardProxy;
    before(async () => {
      legit = await new ForwardProxy(`proxyuser:${PROXY_PASSWORD}`).start();
      rogue = await new ForwardProxy().start();
    });
    after(async () => {
      await legit?.stop();
      await rogue?.stop();
    });

    it("a proxy's URL carries its own credentials: a new host never gets the stored user and password", async () => {
      const created = await org.client.post('/api/proxies', {
        name: 'guarded proxy',
        url: `${legit.url.replace('http://', `http://proxyuser:${PROXY_PASSWORD}@`)}`,
      });
      expect(created.status, created.text).to.equal(201);
      expect(created.body.hasCredentials).to.equal(true);
      const id = created.body.id as string;
      expect((await admin.post(`/api/proxies/${id}/test`, { url: `${provider.url}/models` })).body).to.include({ ok: true });
      expect(legit.requests.at(-1)?.proxyAuthorization).to.equal(`Basic ${Buffer.from(`proxyuser:${PROXY_PASSWORD}`).toString('base64')}`);

      // A PATCH of `url` replaces the whole URL: without credentials in it, the proxy has none.
      const moved = await admin.patch(`/api/proxies/${id}`, { url: rogue.url });
      expect(moved.status, moved.text).to.equal(200);
      expect(moved.body).to.include({ url: rogue.url, hasCredentials: false });
      await admin.post(`/api/proxies/${id}/test`, { url: `${provider.url}/models` });
      expect(rogue.requests.length).to.be.greaterThan(0);
      for (const r of rogue.requests) expect(r.proxyAuthorization).to.equal(undefined);
    });
  });

  describe('connections', () => {
    let apiA: Recorder;
    let apiB: Recorder;
    let connectionId: string;

    const integration = (version: string, uris: string[]) => ({
      name: '@dest/api',
      version,
      type: 'integration',
      schema_version: '0.3',
      display_name: 'Destination API',
      description: 'x',
      _meta: { 'dev.service/api': {} },
      auths: {
        main: {
          type: 'custom',
          credentials: { schema: { type: 'object', required: ['token'], properties: { token: { type: 'string' } } } },
          authorized_uris: uris,
          delivery: { http: { in: 'header', name: 'X-Api-Key' } },
        },
      },
    });
    const publish = async (manifest: Record<string, unknown>, extra: Record<string, string> = {}) => {
      const res = await uploadPackage(org.client, await zip({ 'manifest.json': JSON.stringify(manifest), ...extra }));
      expect(res.status, res.text).to.equal(201);
    };
    const connect = (body: Record<string, unknown>) =>
      org.client.post('/api/integrations/@dest/api/auths/main/connect/fields', { credentials: { token: TOKEN }, ...body });

    /** One call through the credential proxy with the owner's connection. */
    const proxied = async (url: string) => {
      const session = await org.client.post('/api/credential-proxy/sessions', {});
      expect(session.status, session.text).to.equal(201);
      return org.client.request('GET', '/api/credential-proxy/proxy', {
        headers: { 'X-Integration-Id': '@dest/api', 'X-Target': url, 'X-Session-Id': session.body.id },
      });
    };

    /** One run whose model makes one api_call to `url`; answers the tool result the model was sent. */
    const apiCall = async (url: string) => {
      const marker = `dest-${randomBytes(4).toString('hex')}`;
      const seen: RecordedRequest[] = [];
      services.model.script(marker, [
        () => toolCall('api_call', { integration: '@dest/api', method: 'GET', url }),
        (req) => {
          seen.push(req);
          return toolCall('output', { done: true });
        },
      ]);
      const res = await org.client.post('/api/agents/@dest/agent/run', { input: { case: marker } });
      expect(res.status, res.text).to.equal(201);
      const done = await org.client.get(`/api/runs/${res.body.id}?wait=60`);
      expect(done.body.status, done.body.error).to.equal('success');
      const msgs = seen[0].body.messages as Array<{ role: string; content: string }>;
      return [...msgs].reverse().find((m) => m.role === 'tool')!.content;
    };

    before(async () => {
      apiA = await new Recorder().start();
      apiB = await new Recorder().start();
      await org.client.post('/api/models', { name: 'run model', provider: 'openai-compatible', baseUrl: services.model.url, model: 'm', isDefault: true });
      await publish(integration('1.0.0', [`${apiA.url}/**`]));
      await publish(
        {
          ...agentManifest({
            name: '@dest/agent',
            input: { type: 'object', properties: { case: { type: 'string' } } },
            dependencies: { integrations: { '@dest/api': '^1.0.0' } },
          }),
          integrations_configuration: { '@dest/api': { tools: ['api_call'] } },
        },
        { 'prompt.md': 'Call the API.' },
      );
      const conn = await connect({});
      expect(conn.status, conn.text).to.equal(201);
      connectionId = conn.body.id;
    });
    after(async () => {
      await apiA?.stop();
      await apiB?.stop();
    });

    it('a newer version adding a host does not take existing tokens there until the owner reconnects', async () => {
      const ok = await proxied(`${apiA.url}/v1/things`);
      expect(ok.status, ok.text).to.equal(200);
      expect(apiA.hits.at(-1)?.headers['x-api-key']).to.equal(TOKEN);

      // Version 1.1.0 reaches a second host as well (the attacker's, say).
      await publish(integration('1.1.0', [`${apiA.url}/**`, `${apiB.url}/**`]));

      const refused = await proxied(`${apiB.url}/v1/things`);
      expectProblem(refused, 403, 'unauthorized_target');
      expect(refused.body.detail).to.contain('version 1.0.0').and.contain('reconnect');
      const tool = await apiCall(`${apiB.url}/v1/things`);
      expect(tool).to.match(/^api_call refused \(unauthorized_target\): .*outside the URLs this connection was granted \(made under version 1\.0\.0/);
      expect(apiB.hits, 'the token went to the host a newer version added').to.have.length(0);
      // Where it was granted, it still goes.
      expect((await proxied(`${apiA.url}/v1/still`)).status).to.equal(200);
      expect(JSON.parse(await apiCall(`${apiA.url}/v1/still`))).to.include({ status: 200 });

      // The owner reconnects under 1.1.0: now the token goes to the added host too.
      const again = await connect({ connection_id: connectionId });
      expect(again.status, again.text).to.equal(200);
      const granted = await proxied(`${apiB.url}/v1/things`);
      expect(granted.status, granted.text).to.equal(200);
      expect(JSON.parse(await apiCall(`${apiB.url}/v1/run`))).to.include({ status: 200 });
      expect(apiB.hits.map((h) => [h.url, h.headers['x-api-key']])).to.deep.equal([
        ['/v1/things', TOKEN],
        ['/v1/run', TOKEN],
      ]);
    });
  });
});
