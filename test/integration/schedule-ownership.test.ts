// Schedules cannot be borrowed: their runs execute as the creator, so only the creator changes
// what or when they run; admins of the space may pause, resume or delete them. And a tick that
// is refused before its run exists does not spend the organization's launch rate.
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { expect } from 'chai';
import { type Client, newKey, newMember, newOrg, type TestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { type RunServices, startRunServices } from '../support/run-services.ts';
import { fireSchedule } from '../support/schedules.ts';
import { stack } from '../support/stack.ts';

const TOPIC_SCHEMA = { type: 'object', properties: { topic: { type: 'string' } } };
/** Every change a PATCH can make but pausing and resuming. */
const CHANGES: Record<string, unknown>[] = [
  { name: 'borrowed' },
  { input: { topic: 'borrowed' } },
  { cron_expression: '* * * * *' },
  { timezone: 'Asia/Tokyo' },
];
// Small enough to exhaust in a test; the API and the worker (which admits ticks) share it.
const RATE = 2;
const LIMITS = { PLATFORM_RUN_LIMITS: JSON.stringify({ per_org_global_rate_per_min: RATE }) };

describe('schedule ownership', function () {
  this.timeout(90_000);
  let services: RunServices;
  let api: TestApi;
  let connection: Connection;
  let temporal: TemporalClient;
  let org: Awaited<ReturnType<typeof newOrg>>;
  const created: string[] = [];

  before(async () => {
    services = await startRunServices({ output: { summary: 'ran' }, apiEnv: LIMITS, workerEnv: LIMITS });
    ({ api } = services);
    connection = await Connection.connect({ address: stack().temporalAddress });
    temporal = new TemporalClient({ connection });
    org = await newOrg(api);
    await importAgent(org.client, { name: '@own/agent', input: TOPIC_SCHEMA });
  });
  after(async () => {
    for (const id of created)
      await temporal?.schedule
        .getHandle(id)
        .delete()
        .catch(() => undefined);
    await connection?.close();
    await services?.stop();
  });

  async function createOk(client: Client, agent = '@own/agent', body: Record<string, unknown> = {}) {
    const res = await client.post(`/api/agents/${agent}/schedules`, {
      name: 'mine',
      cron_expression: '0 3 1 1 *',
      timezone: 'UTC',
      input: { topic: 'mine' },
      ...body,
    });
    expect(res.status, res.text).to.equal(201);
    created.push(res.body.id);
    return res.body;
  }

  /** A member of the default space holding a custom role of exactly `scopes`. */
  async function customMember(tag: string, scopes: string[]) {
    const member = await newMember(api, org, 'member', tag);
    const role = await org.client.post(`/api/orgs/${org.orgId}/roles`, { name: tag, scopes });
    expect(role.status, role.text).to.equal(201);
    const set = await org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${member.userId}`, { custom_role_id: role.body.id });
    expect(set.status, set.text).to.equal(200);
    return member;
  }

  async function expectUnchanged(s: Record<string, any>) {
    const read = await org.client.get(`/api/schedules/${s.id}`);
    expect(read.status).to.equal(200);
    expect(read.body).to.deep.include({ name: s.name, enabled: s.enabled, cron_expression: s.cron_expression, timezone: s.timezone, input: s.input });
  }

  it('refuses every edit and the deletion by a non-creator who is not an admin (403), whatever their scopes', async () => {
    const creator = await newMember(api, org, 'builder', 'creator');
    const s = await createOk(creator.client);
    const peer = await newMember(api, org, 'builder', 'peer');
    // Every scope an admin holds over schedules, but not the admin role.
    const lookalike = await customMember('lookalike', ['schedules:read', 'schedules:write', 'schedules:delete', 'agents:run', 'agents:read']);
    for (const who of [peer, lookalike]) {
      for (const body of [...CHANGES, { enabled: false }, { enabled: true }, {}]) {
        const res = await who.client.patch(`/api/schedules/${s.id}`, body);
        expectProblem(res, 403, 'forbidden');
        expect(res.body.detail, JSON.stringify(body)).to.contain('Only the person who created this schedule');
      }
    }
    expectProblem(await lookalike.client.delete(`/api/schedules/${s.id}`), 403, 'forbidden');
    await expectUnchanged(s);
  });

  it('answers 404 to a non-creator who cannot read the schedule', async () => {
    const creator = await newMember(api, org, 'builder', 'hidden-creator');
    const s = await createOk(creator.client);
    const blind = await customMember('blind', ['schedules:write', 'schedules:delete', 'agents:run', 'agents:read']);
    expectProblem(await blind.client.patch(`/api/schedules/${s.id}`, { enabled: false }), 404, 'not_found');
    expectProblem(await blind.client.delete(`/api/schedules/${s.id}`), 404, 'not_found');
    await expectUnchanged(s);
  });

  it('lets an admin of the space who did not create it pause, resume and delete it, nothing else', async () => {
    const creator = await newMember(api, org, 'builder', 'admins-creator');
    const spaceAdmin = await newMember(api, org, 'admin', 'space-admin');
    const ownerKey = await newKey(api, org.client, { name: 'owner key' }); // the org owner, through a key
    for (const admin of [spaceAdmin.client, org.client, ownerKey.client]) {
      const s = await createOk(creator.client);
      for (const body of [...CHANGES, { enabled: false, name: 'paused by admin' }]) {
        const res = await admin.patch(`/api/schedules/${s.id}`, body);
        expectProblem(res, 403, 'forbidden');
        expect(res.body.detail).to.contain('Only the person who created this schedule can change');
      }
      await expectUnchanged(s);
      const paused = await admin.patch(`/api/schedules/${s.id}`, { enabled: false });
      expect(paused.status, paused.text).to.equal(200);
      expect(paused.body).to.include({ enabled: false, next_run_at: null });
      expect((await temporal.schedule.getHandle(s.id).describe()).state.paused).to.equal(true);
      const resumed = await admin.patch(`/api/schedules/${s.id}`, { enabled: true });
      expect(resumed.status, resumed.text).to.equal(200);
      expect(resumed.body).to.include({ enabled: true, name: s.name, cron_expression: s.cron_expression, created_by: creator.userId });
      expect((await admin.delete(`/api/schedules/${s.id}`)).status).to.equal(204);
      expectProblem(await org.client.get(`/api/schedules/${s.id}`), 404, 'not_found');
    }
    // An owner viewing the space as a builder acts as one.
    const s = await createOk(creator.client);
    expectProblem(await org.client.with({ 'X-View-As': 'builder' }).patch(`/api/schedules/${s.id}`, { enabled: false }), 403, 'forbidden');
    await expectUnchanged(s);
  });

  it('lets the creator make every change, by session or through their own API key, but not while acting for an end-user', async () => {
    const creator = await newMember(api, org, 'admin', 'full-creator');
    const own = await newKey(api, creator.client, { name: 'creator key' });
    const s = await createOk(creator.client);
    const bySession = await creator.client.patch(`/api/schedules/${s.id}`, { name: 'renamed', input: { topic: 'changed' } });
    expect(bySession.status, bySession.text).to.equal(200);
    const byKey = await own.client.patch(`/api/schedules/${s.id}`, { cron_expression: '0 9 * * *', timezone: 'Europe/Paris', enabled: false });
    expect(byKey.status, byKey.text).to.equal(200);
    expect(byKey.body).to.deep.include({
      name: 'renamed',
      input: { topic: 'changed' },
      cron_expression: '0 9 * * *',
      timezone: 'Europe/Paris',
      enabled: false,
    });
    const endUser = await own.client.post('/api/end-users', { externalId: `owner-${s.id}`, name: 'Customer' });
    expect(endUser.status, endUser.text).to.equal(201);
    const asEndUser = own.client.with({ 'Service-User': endUser.body.id });
    for (const body of [{ name: 'theirs' }, { enabled: true }]) {
      const res = await asEndUser.patch(`/api/schedules/${s.id}`, body);
      expectProblem(res, 403, 'forbidden');
      expect(res.body.detail).to.contain('end-user');
    }
    expectProblem(await asEndUser.delete(`/api/schedules/${s.id}`), 403, 'forbidden');
    expect((await own.client.delete(`/api/schedules/${s.id}`)).status).to.equal(204);
  });

  it('does not spend the launch rate on ticks refused before their run exists', async () => {
    const team = await newOrg(api, 'rate');
    await team.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: services.model.url, model: 'm', isDefault: true });
    await importAgent(team.client, { name: '@rate/agent', input: TOPIC_SCHEMA });
    await importAgent(team.client, { name: '@rate/evolving', input: TOPIC_SCHEMA });
    const refusedIds: string[] = [];
    for (let i = 0; i < RATE + 1; i++) refusedIds.push((await createOk(team.client, '@rate/evolving', { input: {} })).id);
    await importAgent(team.client, { name: '@rate/evolving', version: '2.0.0', input: { ...TOPIC_SCHEMA, required: ['topic'] } });
    for (const id of refusedIds) {
      const run = await team.client.get(`/api/runs/${await fireSchedule(temporal, id)}`);
      expect(run.body).to.include({ status: 'failed', scheduleId: id });
    }
    // More refusals than the rate, and the organization still launches the rate's worth of runs.
    const launches: string[] = [];
    for (let i = 0; i < RATE; i++) {
      const res = await team.client.post('/api/agents/@rate/agent/run', { input: { topic: `launch ${i}` } });
      expect(res.status, res.text).to.equal(201);
      launches.push(res.body.id);
    }
    expectProblem(await team.client.post('/api/agents/@rate/agent/run', { input: {} }), 429, 'org_run_rate_limited');
    // A tick refused by the rate counts the admitted launches only, itself and earlier refusals not.
    for (let i = 0; i < 2; i++) {
      const limited = await createOk(team.client, '@rate/agent');
      const run = await team.client.get(`/api/runs/${await fireSchedule(temporal, limited.id)}`);
      expect(run.body).to.include({ status: 'failed' });
      expect(run.body.error).to.contain(`launched ${RATE} runs in the last minute (limit ${RATE})`);
    }
    for (const id of launches) expect((await team.client.get(`/api/runs/${id}?wait=30`)).body.status).to.equal('success');
  });
});
