// Issue 17, SPEC 1: the optional modules (webhooks, oidc, mcp, chat) and `MODULES`. The API runs
// with every module on, then with each one left out: its routes answer 404 and leave OpenAPI and
// llms.txt, its scopes are neither held nor grantable, and a worker registers none of its
// workflows or activities.
import { bundleWorkflowCode } from '@temporalio/worker';
import { expect } from 'chai';
import { loadConfig } from '../../shared/config.ts';
import { MODULES, type ModuleName, OPTIONAL_MODULES } from '../../shared/modules.ts';
import { NON_KEY_SCOPES, ORG_LEVEL_SCOPES } from '../../shared/permissions.ts';
import { WORKFLOWS_PATH, workflowEntry } from '../../workers/workflow-entry.ts';
import { Client, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { HttpsReceiver } from '../support/receiver.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

/** A route of each module a caller can reach: `status` with the module on; 404 without it. */
const PROBES: Record<ModuleName, Array<{ method: 'GET' | 'POST'; path: string; openapi: string; status: number; body?: unknown }>> = {
  webhooks: [{ method: 'GET', path: '/api/webhooks', openapi: '/api/webhooks', status: 200 }],
  oidc: [
    { method: 'GET', path: '/.well-known/openid-configuration', openapi: '/.well-known/openid-configuration', status: 200 },
    { method: 'GET', path: '/api/oauth/clients', openapi: '/api/oauth/clients', status: 200 },
  ],
  mcp: [
    {
      method: 'POST',
      path: '/api/mcp',
      openapi: '/api/mcp',
      status: 200,
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'modules-probe', version: '1' } },
      },
    },
  ],
  chat: [{ method: 'GET', path: '/api/chat/sessions', openapi: '/api/chat/sessions', status: 200 }],
};

const allBut = (off: ModuleName) => OPTIONAL_MODULES.filter((m) => m !== off).join(',');

async function surface(api: TestApi, client: Client) {
  const openapi = await client.get('/api/openapi.json');
  const llms = await client.get('/llms.txt');
  const scopes = await client.get('/api/api-keys/available-scopes');
  const me = await client.get('/api/me');
  expect(scopes.status, scopes.text).to.equal(200);
  return { paths: Object.keys(openapi.body.paths), llms: llms.text, grantable: scopes.body.scopes as string[], held: me.body.scopes as string[], api };
}

describe('optional modules (MODULES)', function () {
  this.timeout(120_000);

  it('refuses an unknown module name at start, and takes an empty list as no module', () => {
    expect(() => loadConfig({ MODULES: 'webhooks,billing' })).to.throw(/MODULES names unknown modules \(billing\)/);
    expect([...loadConfig({ MODULES: '' }).modules]).to.deep.equal([]);
    expect([...loadConfig({}).modules]).to.deep.equal([...OPTIONAL_MODULES]);
  });

  it("with every module on, serves each module's routes, documents them and grants their scopes", async () => {
    const api = await startTestApi();
    try {
      const org = await newOrg(api, 'modules-all');
      const { paths, grantable, held } = await surface(api, org.client);
      for (const m of OPTIONAL_MODULES) {
        for (const p of PROBES[m]) {
          const res = await org.client.request(p.method, p.path, { body: p.body });
          expect(res.status, `${m} ${p.path}: ${res.text}`).to.equal(p.status);
          expect(paths).to.include(p.openapi);
        }
        // GET /api/me shows the space's scopes; keys may carry organization-level ones, not session-only ones.
        for (const s of MODULES[m].scopes) {
          if (!ORG_LEVEL_SCOPES.has(s)) expect(held, `${m} ${s}`).to.include(s);
          if (!NON_KEY_SCOPES.has(s)) expect(grantable, `${m} ${s}`).to.include(s);
        }
      }
    } finally {
      await api.close();
    }
  });

  for (const off of OPTIONAL_MODULES) {
    it(`without ${off}: its routes are 404 and undocumented, its scopes held and granted by nobody`, async () => {
      const api = await startTestApi({ MODULES: allBut(off) });
      try {
        const org = await newOrg(api, `modules-no-${off}`);
        const { paths, llms, grantable, held } = await surface(api, org.client);
        for (const p of PROBES[off]) {
          const res = await org.client.request(p.method, p.path, { body: p.body });
          expect(res.status, `${p.path}: ${res.text}`).to.equal(404);
          expect(paths).not.to.include(p.openapi);
          expect(llms).not.to.include(p.openapi);
        }
        for (const s of MODULES[off].scopes) {
          expect(held).not.to.include(s);
          expect(grantable).not.to.include(s);
        }
        // A key asking for the module's scopes gets none of them (silently dropped, as scopes one lacks).
        const key = await org.client.post('/api/api-keys', {
          name: 'asks for everything',
          scopes: ['runs:read', ...MODULES[off].scopes.filter((x) => !NON_KEY_SCOPES.has(x))],
        });
        expect(key.status, key.text).to.equal(201);
        expect(key.body.scopes).to.deep.equal(['runs:read']);
        // The other modules are untouched.
        for (const m of OPTIONAL_MODULES.filter((x) => x !== off)) {
          for (const p of PROBES[m]) expect(paths).to.include(p.openapi);
        }
      } finally {
        await api.close();
      }
    });
  }

  it('without oidc, an access token is no credential', async () => {
    const api = await startTestApi({ MODULES: allBut('oidc') });
    try {
      const header = Buffer.from('{"alg":"ES256","typ":"at+jwt"}').toString('base64url');
      const jwt = `${header}.${Buffer.from('{"sub":"x"}').toString('base64url')}.${'A'.repeat(86)}`;
      const res = await fetch(`${api.url}/api/me`, { headers: { authorization: `Bearer ${jwt}` } });
      expect(res.status).to.equal(401);
      expect(((await res.json()) as { detail: string }).detail).to.match(/oidc module is not enabled/);
    } finally {
      await api.close();
    }
  });

  it("a worker bundles the core workflows and only the enabled modules' ones", async () => {
    expect(workflowEntry(new Set(OPTIONAL_MODULES))).to.equal(WORKFLOWS_PATH);
    const all = Object.keys(await import(WORKFLOWS_PATH));
    const none = Object.keys(await import(workflowEntry(new Set())));
    for (const m of OPTIONAL_MODULES) {
      for (const w of MODULES[m].workflows) {
        expect(all, w).to.include(w);
        expect(none, w).not.to.include(w);
      }
    }
    expect(none).to.include.members(['runAgent', 'scheduledRun', 'remoteRun', 'sweepExpiredFiles']);
    const withWebhooks = Object.keys(await import(workflowEntry(new Set(['webhooks']))));
    expect(withWebhooks).to.include('deliverWebhook');
    // What a worker started with MODULES= actually bundles.
    const quiet = { trace() {}, debug() {}, info() {}, log() {}, warn() {}, error: console.error };
    const bundle = await bundleWorkflowCode({ workflowsPath: workflowEntry(new Set()), logger: quiet });
    expect(bundle.code).to.include('runAgent');
    expect(bundle.code).not.to.include('deliverWebhook');
  });

  describe('a run while the webhooks module is off', () => {
    let model: FakeModel;
    let receiver: HttpsReceiver;
    before(async () => {
      model = await new FakeModel().start();
      receiver = await new HttpsReceiver().start();
    });
    after(async () => {
      await model?.stop();
      await receiver?.stop();
    });

    it('succeeds and delivers nothing to a webhook created while the module was on', async () => {
      const env = workerEnv({ NODE_EXTRA_CA_CERTS: receiver.caFile });
      const on = await startTestApi(env);
      const org = await newOrg(on, 'modules-hooks');
      await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
      await importAgent(org.client, { name: '@mods/agent', input: { type: 'object' } });
      const hook = await org.client.post('/api/webhooks', { level: 'space', spaceId: org.defaultSpaceId, url: receiver.url('/h'), events: ['run.success'] });
      expect(hook.status, hook.text).to.equal(201);
      await on.close();

      const off = await startTestApi({ ...env, MODULES: allBut('webhooks') });
      const worker = await startTestWorker({ NODE_EXTRA_CA_CERTS: receiver.caFile, MODULES: allBut('webhooks') });
      try {
        const client = new Client(off.url, org.client.defaults);
        client.cookie = org.client.cookie; // the same session, on the API without webhooks
        model.script('modules-hooks-off', [() => toolCall('output', {})]);
        const run = await client.post('/api/agents/@mods/agent/run', { input: { marker: 'modules-hooks-off' } });
        expect(run.status, run.text).to.equal(201);
        const done = await client.get(`/api/runs/${run.body.id}?wait=30`);
        expect(done.body.status, done.body.error).to.equal('success');
        await new Promise((r) => setTimeout(r, 1500)); // a delivery would have arrived by now
        expect(receiver.requests).to.have.length(0);
        expect(await off.knex('webhook_deliveries').where({ webhook_id: hook.body.id })).to.have.length(0);
      } finally {
        await worker.stop();
        await off.close();
      }
    });
  });
});
