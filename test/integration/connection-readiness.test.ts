// Connection readiness and launch refusal (SPEC 2.5, 2.7, 2.8, 4.4; DESIGN.md 7) on the real
// stack: the readiness route in each status, 409 `connection_missing` with every errors[] field
// and a fresh hosted link, the `run.connection_missing` event verified with standardwebhooks,
// `connections` in launch bodies, refused schedule ticks and the schedules a deleted connection
// disables.
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { zip } from '../fixtures/packages/build.ts';
import { type Client, newMember, newOrg, type TestApi } from '../support/api.ts';
import type { FakeModel } from '../support/fake-model.ts';
import { agentManifest, uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import type { HttpsReceiver, Received } from '../support/receiver.ts';
import { type RunServices, startRunServices } from '../support/run-services.ts';
import { fireSchedule } from '../support/schedules.ts';
import { stack } from '../support/stack.ts';

const CRM = {
  name: '@acme/crm',
  version: '1.0.0',
  type: 'integration',
  schema_version: '0.3',
  display_name: 'Acme CRM',
  description: 'x',
  auths: {
    main: {
      type: 'custom',
      credentials: { schema: { type: 'object', required: ['api_key'], properties: { api_key: { type: 'string' } } } },
      authorized_uris: ['https://api.acme.test/**'],
      delivery: { http: { in: 'header', name: 'Authorization', prefix: 'Bearer ', value: '{$credential.api_key}' } },
    },
    oauth: { type: 'oauth2', authorized_uris: ['https://api.acme.test/**'] },
  },
};

const DEPENDS = { integrations: { '@acme/crm': '^1.0.0' } };

async function importManifest(client: Client, manifest: Record<string, unknown>, prompt?: string): Promise<void> {
  const files: Record<string, string> = { 'manifest.json': JSON.stringify(manifest) };
  if (prompt) files['prompt.md'] = prompt;
  const res = await uploadPackage(client, await zip(files));
  if (res.status !== 201) throw new Error(`import of ${manifest.name} failed: ${res.status} ${res.text}`);
}

/** The integration and three agents: one on the integration's first auth, one on its oauth2 auth with scopes, one without integrations. */
async function importAll(client: Client): Promise<void> {
  await importManifest(client, CRM);
  await importManifest(client, agentManifest({ name: '@ready/agent', dependencies: DEPENDS }), 'Use the CRM.');
  await importManifest(
    client,
    {
      ...agentManifest({ name: '@ready/scoped', dependencies: DEPENDS }),
      integrations_configuration: { '@acme/crm': { auth_key: 'oauth', scopes: ['read', 'write'], tools: [] } },
    },
    'Use the CRM with scopes.',
  );
  await importManifest(client, agentManifest({ name: '@ready/plain' }), 'No integrations.');
}

describe('connection readiness and launch refusal', function () {
  this.timeout(90_000);
  let services: RunServices;
  let api: TestApi;
  let model: FakeModel;
  let receiver: HttpsReceiver;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let connection: Connection;
  let temporal: TemporalClient;
  const schedules: string[] = [];

  before(async () => {
    services = await startRunServices({ output: { summary: 'done' } });
    ({ api, model, receiver } = services);
    connection = await Connection.connect({ address: stack().temporalAddress });
    temporal = new TemporalClient({ connection });
    org = await newOrg(api, 'ready');
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    await importAll(org.client);
  });
  after(async () => {
    for (const id of schedules)
      await temporal?.schedule
        .getHandle(id)
        .delete()
        .catch(() => undefined);
    await connection?.close();
    await services?.stop();
  });

  const readiness = (agent = '@ready/agent', client = org.client) => client.get(`/api/agents/${agent}/connection-readiness`);
  const connect = (client: Client, apiKey: string) =>
    client.post('/api/integrations/@acme/crm/auths/main/connect/fields', { credentials: { api_key: apiKey } });
  const at = (tag: string) => receiver.requests.filter((r) => r.path === `/${tag}`);
  async function until(tag: string, n: number): Promise<Received[]> {
    for (let i = 0; i < 150 && at(tag).length < n; i++) await new Promise((r) => setTimeout(r, 100));
    expect(at(tag), `deliveries at /${tag}`).to.have.length(n);
    return at(tag);
  }
  async function createSchedule(client: Client, agent: string) {
    const res = await client.post(`/api/agents/${agent}/schedules`, { name: 'nightly', cron_expression: '0 3 1 1 *', timezone: 'UTC', input: {} });
    expect(res.status, res.text).to.equal(201);
    schedules.push(res.body.id);
    return res.body;
  }
  const agentRunCount = async (client: Client, agent: string) => (await client.get(`/api/agents/${agent}/runs?limit=100`)).body.data.length as number;

  it('readiness: missing without a connection, 404 for an agent the caller cannot see', async () => {
    const res = await readiness();
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({
      object: 'connection_readiness',
      ready: false,
      integrations: [
        {
          packageId: '@acme/crm',
          auth_key: 'main',
          status: 'missing',
          connection_id: null,
          candidate_connections: [],
          required_scopes: [],
          missing_scopes: [],
        },
      ],
    });
    expect((await readiness('@ready/plain')).body).to.deep.equal({ object: 'connection_readiness', ready: true, integrations: [] });
    expectProblem(await readiness('@ready/nope'), 404, 'not_found');
    const other = await newOrg(api, 'stranger');
    expectProblem(await readiness('@ready/agent', other.client), 404, 'not_found');
  });

  it(
    'refuses a launch without a connection: 409 connection_missing with every field, a fresh link, no run, and a signed run.connection_missing ' + 'event',
    async () => {
      const hook = await org.client.post('/api/webhooks', {
        level: 'space',
        spaceId: org.defaultSpaceId,
        url: receiver.url('/missing'),
        events: ['run.connection_missing'],
      });
      expect(hook.status, hook.text).to.equal(201);
      const res = await org.client.post('/api/agents/@ready/agent/run', { input: {} });
      expectProblem(res, 409, 'connection_missing');
      expect(res.body.errors).to.have.length(1);
      const e = res.body.errors[0];
      expect(e).to.include({
        field: 'manifest.dependencies.integrations.@acme/crm',
        code: 'connection_missing',
        packageId: '@acme/crm',
        auth_key: 'main',
        required_auth_key: null,
      });
      expect(e.message).to.be.a('string').and.contain('@acme/crm');
      expect(e.available_auth_keys).to.deep.equal(['main', 'oauth']);
      expect(e.candidate_connections).to.deep.equal([]);
      expect(e.missing_scopes).to.deep.equal([]);
      expect(e.required_scopes).to.deep.equal([]);
      expect(e.connect_url).to.match(/\/api\/integrations\/connect\/start\?token=/);
      expect(Date.parse(e.expiresAt) - Date.now()).to.be.within(9 * 60_000, 10 * 60_000 + 5000);
      // The link is live: it opens the hosted form (as the caller, for this auth).
      const form = await fetch(api.url + new URL(e.connect_url).pathname + new URL(e.connect_url).search);
      expect(form.status).to.equal(200);
      expect(await form.text()).to.contain('api_key');
      const session = await api
        .knex('connect_sessions')
        .where({ integration_package_id: '@acme/crm', owner_id: org.userId })
        .orderBy('created_at', 'desc')
        .first();
      expect(session).to.include({ auth_key: 'main', owner_type: 'user', space_id: org.defaultSpaceId });
      expect(await agentRunCount(org.client, '@ready/agent')).to.equal(0);

      const [delivery] = await until('missing', 1);
      const verified = new Webhook(hook.body.secret).verify(delivery.body, delivery.headers as Record<string, string>) as any;
      expect(verified).to.include({ object: 'event', type: 'run.connection_missing' });
      expect(verified.id).to.match(/^evt_/);
      expect(verified.data.object).to.deep.include({ object: 'run_attempt', packageId: '@ready/agent', actor: { type: 'user', id: org.userId } });
      const [evErr] = verified.data.object.errors;
      expect(evErr).to.include({ code: 'connection_missing', packageId: '@acme/crm', auth_key: 'main' });
      expect(evErr).to.have.all.keys(
        'field',
        'code',
        'message',
        'packageId',
        'auth_key',
        'required_auth_key',
        'available_auth_keys',
        'connection_id',
        'candidate_connections',
        'missing_scopes',
        'required_scopes',
      );
      await org.client.delete(`/api/webhooks/${hook.body.id}`);
    },
  );

  it('readiness ready after connecting; the launch uses the most recently updated usable connection and records it on the run', async () => {
    const first = await connect(org.client, 'sk-first');
    expect(first.status, first.text).to.equal(201);
    const ready = await readiness();
    expect(ready.body.ready).to.equal(true);
    expect(ready.body.integrations[0]).to.deep.include({ status: 'ready', connection_id: first.body.id, missing_scopes: [] });
    expect(ready.body.integrations[0].candidate_connections).to.deep.equal([
      { id: first.body.id, label: first.body.label, account_id: 'default', owned_by_actor: true, needs_reconnection: false },
    ]);
    await new Promise((r) => setTimeout(r, 20));
    const second = await connect(org.client, 'sk-second');
    expect((await readiness()).body.integrations[0].connection_id).to.equal(second.body.id);

    const run = await org.client.post('/api/agents/@ready/agent/run', { input: {} });
    expect(run.status, run.text).to.equal(201);
    expect((await api.knex('runs').where({ id: run.body.id }).first()).connections).to.deep.equal({ '@acme/crm': second.body.id });
    const done = await org.client.get(`/api/runs/${run.body.id}?wait=30`);
    expect(done.body.status).to.equal('success');

    // `connections` chooses another of the caller's connections.
    const chosen = await org.client.post('/api/agents/@ready/agent/run', { input: {}, connections: { '@acme/crm': first.body.id } });
    expect(chosen.status, chosen.text).to.equal(201);
    expect((await api.knex('runs').where({ id: chosen.body.id }).first()).connections).to.deep.equal({ '@acme/crm': first.body.id });
    await org.client.get(`/api/runs/${chosen.body.id}?wait=30`);
  });

  it("`connections` naming someone else's connection, or none, is 404 naming it; an integration the agent does not use is 400", async () => {
    const member = await newMember(api, org, 'admin', 'other');
    const theirs = await connect(member.client, 'sk-theirs');
    expect(theirs.status, theirs.text).to.equal(201);
    const before = await agentRunCount(org.client, '@ready/agent');
    const res = await org.client.post('/api/agents/@ready/agent/run', { input: {}, connections: { '@acme/crm': theirs.body.id } });
    expectProblem(res, 404, 'not_found');
    expect(res.body.detail).to.contain(theirs.body.id);
    expect(res.body.errors[0]).to.include({ field: 'connections.@acme/crm', connection_id: theirs.body.id });
    expectProblem(await org.client.post('/api/agents/@ready/agent/run', { input: {}, connections: { '@acme/crm': 'conn_nope' } }), 404, 'not_found');
    const unknown = await org.client.post('/api/agents/@ready/agent/run', { input: {}, connections: { '@acme/other': theirs.body.id } });
    expectProblem(unknown, 400, 'validation_failed');
    expect(unknown.body.errors[0]).to.include({ field: 'connections.@acme/other' });
    expect(await agentRunCount(org.client, '@ready/agent')).to.equal(before);
  });

  it('readiness: needs_reconnection when the only connection needs it; the launch is refused with a link that refreshes it', async () => {
    const member = await newMember(api, org, 'admin', 'stale');
    const conn = await connect(member.client, 'sk-stale');
    await api.knex('connections').where({ id: conn.body.id }).update({ needs_reconnection: true });
    const res = await readiness('@ready/agent', member.client);
    expect(res.body.ready).to.equal(false);
    expect(res.body.integrations[0]).to.deep.include({ status: 'needs_reconnection', connection_id: conn.body.id });
    expect(res.body.integrations[0].candidate_connections[0]).to.include({ id: conn.body.id, needs_reconnection: true, owned_by_actor: true });
    const launch = await member.client.post('/api/agents/@ready/agent/run', { input: {} });
    expectProblem(launch, 409, 'connection_missing');
    expect(launch.body.errors[0]).to.include({ code: 'needs_reconnection', connection_id: conn.body.id });
    const session = await api.knex('connect_sessions').where({ owner_id: member.userId }).orderBy('created_at', 'desc').first();
    expect(session.connection_id).to.equal(conn.body.id);
    // Choosing it explicitly is refused too (never swapped for another).
    expectProblem(
      await member.client.post('/api/agents/@ready/agent/run', { input: {}, connections: { '@acme/crm': conn.body.id } }),
      409,
      'connection_missing',
    );
  });

  it('readiness: missing_scopes for an oauth2 auth whose connection lacks a required scope; scopes are not checked for fields auths', async () => {
    const member = await newMember(api, org, 'admin', 'scoped');
    await api.knex('connections').insert({
      id: 'conn_scopedtest0000000000000',
      org_id: org.orgId,
      space_id: org.defaultSpaceId,
      integration_package_id: '@acme/crm',
      auth_key: 'oauth',
      owner_type: 'user',
      owner_id: member.userId,
      label: 'Acme CRM',
      scopes: ['read'],
      credentials_sealed: 'unused',
    });
    const res = await readiness('@ready/scoped', member.client);
    expect(res.body.integrations[0]).to.deep.include({
      packageId: '@acme/crm',
      auth_key: 'oauth',
      status: 'missing_scopes',
      connection_id: 'conn_scopedtest0000000000000',
      required_scopes: ['read', 'write'],
      missing_scopes: ['write'],
    });
    const launch = await member.client.post('/api/agents/@ready/scoped/run', { input: {} });
    expectProblem(launch, 409, 'connection_missing');
    expect(launch.body.errors[0]).to.include({ code: 'missing_scopes', auth_key: 'oauth', required_auth_key: 'oauth' });
    expect(launch.body.errors[0].missing_scopes).to.deep.equal(['write']);
    // The oauth2 connection does not serve the agent on the fields auth.
    expect((await readiness('@ready/agent', member.client)).body.integrations[0]).to.include({ status: 'missing', auth_key: 'main' });
  });

  it('inline runs are refused the same way (validate answers the problem without a link or an event)', async () => {
    const member = await newMember(api, org, 'admin', 'inline');
    const body = { manifest: agentManifest({ name: '@inl-ready/agent', dependencies: DEPENDS }), prompt: 'Use the CRM.', input: {} };
    const res = await member.client.post('/api/runs/inline', body);
    expectProblem(res, 409, 'connection_missing');
    expect(res.body.errors[0]).to.include({ code: 'connection_missing', packageId: '@acme/crm', auth_key: 'main' });
    expect(res.body.errors[0].connect_url).to.be.a('string');
    const validate = await member.client.post('/api/runs/inline/validate', body);
    expectProblem(validate, 409, 'connection_missing');
    expect(validate.body.errors[0]).to.include({ connect_url: null, expiresAt: null });
    expect(Number((await api.knex('packages').where({ org_id: org.orgId, scope: '@inl-ready' }).count('* as n').first())!.n)).to.equal(0);
    const conn = await connect(member.client, 'sk-inline');
    const ok = await member.client.post('/api/runs/inline', { ...body, connections: { '@acme/crm': conn.body.id } });
    expect(ok.status, ok.text).to.equal(201);
    expect((await api.knex('runs').where({ id: ok.body.id }).first()).connections).to.deep.equal({ '@acme/crm': conn.body.id });
    await member.client.get(`/api/runs/${ok.body.id}?wait=30`);
  });

  it('a schedule tick whose creator has no usable connection records no run, emits the event and stays enabled', async () => {
    const other = await newOrg(api, 'ticker');
    await importAll(other.client);
    const hook = await other.client.post('/api/webhooks', { level: 'org', url: receiver.url('/tick'), events: ['run.connection_missing', 'run.failed'] });
    expect(hook.status, hook.text).to.equal(201);
    const s = await createSchedule(other.client, '@ready/agent');
    const runsBefore = Number((await api.knex('runs').where({ org_id: other.orgId }).count('* as n').first())!.n);
    expect(await fireSchedule(temporal, s.id)).to.equal(null);
    expect(Number((await api.knex('runs').where({ org_id: other.orgId }).count('* as n').first())!.n)).to.equal(runsBefore);
    expect((await other.client.get(`/api/schedules/${s.id}/runs`)).body.data).to.deep.equal([]);
    const [delivery] = await until('tick', 1);
    const event = new Webhook(hook.body.secret).verify(delivery.body, delivery.headers as Record<string, string>) as any;
    expect(event.type).to.equal('run.connection_missing');
    expect(event.data.object).to.deep.include({ object: 'run_attempt', packageId: '@ready/agent', actor: { type: 'user', id: other.userId } });
    expect(event.data.object.errors[0]).to.include({ code: 'connection_missing', packageId: '@acme/crm' });
    const read = await other.client.get(`/api/schedules/${s.id}`);
    expect(read.body).to.include({ enabled: true, disabled_reason: null });
    // With a connection, the next tick runs and records it.
    const conn = await connect(other.client, 'sk-tick');
    const runId = await fireSchedule(temporal, s.id);
    expect(runId).to.match(/^run_/);
    expect((await api.knex('runs').where({ id: runId }).first()).connections).to.deep.equal({ '@acme/crm': conn.body.id });
    await other.client.get(`/api/runs/${runId}?wait=30`);
  });

  it('deleting a connection disables the schedules that now lack one, with a reason, and only those', async () => {
    const other = await newOrg(api, 'deleter');
    await importAll(other.client);
    const a = await connect(other.client, 'sk-a');
    const b = await connect(other.client, 'sk-b');
    const uses = await createSchedule(other.client, '@ready/agent');
    const plain = await createSchedule(other.client, '@ready/plain');
    expect((await other.client.delete(`/api/connections/${a.body.id}`)).status).to.equal(204);
    expect((await other.client.get(`/api/schedules/${uses.id}`)).body).to.include({ enabled: true, disabled_reason: null });
    expect((await other.client.delete(`/api/connections/${b.body.id}`)).status).to.equal(204);
    const off = await other.client.get(`/api/schedules/${uses.id}`);
    expect(off.body.enabled).to.equal(false);
    expect(off.body.disabled_reason).to.match(/^Disabled on \d{4}-\d\d-\d\dT/);
    expect(off.body.disabled_reason).to.contain(b.body.id).and.contain('@acme/crm');
    expect((await other.client.get(`/api/schedules/${plain.id}`)).body).to.include({ enabled: true, disabled_reason: null });
  });
});
