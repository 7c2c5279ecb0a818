// Schedules on the real stack: each is a Temporal Schedule whose ticks start `scheduledRun`.
// Ticks are triggered through Temporal (never by waiting for the clock), and next_run_at is
// whatever Temporal computes.
import { Client as TemporalClient, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { expect } from 'chai';
import { type Client, newKey, newMember, newOrg, type TestApi } from '../support/api.ts';
import { type FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { type RunServices, startRunServices } from '../support/run-services.ts';
import { fireSchedule } from '../support/schedules.ts';
import type { HttpsReceiver } from '../support/receiver.ts';
import { stack } from '../support/stack.ts';
import { OrgIdKey, PackageIdKey, SpaceIdKey } from '../../temporal/search-attributes.ts';

const TOPIC_SCHEMA = { type: 'object', properties: { topic: { type: 'string' }, depth: { type: 'integer', default: 2 } } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Day of month of the last Sunday of `month0` (0-based) in `year`. */
function lastSunday(year: number, month0: number): number {
  const last = new Date(Date.UTC(year, month0 + 1, 0));
  return last.getUTCDate() - last.getUTCDay();
}

/**
 * The test's own oracle for `0 12 <day> <month> *` in Europe/Paris: the next such noon, in UTC.
 * Paris is UTC+2 from the last Sunday of March to the last Sunday of October, UTC+1 otherwise
 * (noon is never inside the changing hour).
 */
function nextParisNoon(month0: number, day: number): string {
  for (let year = new Date().getUTCFullYear(); ; year++) {
    const summer = (month0 > 2 || (month0 === 2 && day >= lastSunday(year, 2))) && (month0 < 9 || (month0 === 9 && day < lastSunday(year, 9)));
    const at = Date.UTC(year, month0, day, summer ? 10 : 11);
    if (at > Date.now()) return new Date(at).toISOString();
  }
}

describe('schedules', function () {
  this.timeout(90_000);
  let services: RunServices;
  let api: TestApi;
  let model: FakeModel;
  let receiver: HttpsReceiver;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let connection: Connection;
  let temporal: TemporalClient;
  const created: string[] = [];

  before(async () => {
    // Ticks are admitted by the worker: with a limit of one live run per organization, one
    // running run makes the next tick fail (the API keeps the default limits).
    services = await startRunServices({ output: { summary: 'scheduled' }, workerEnv: { PLATFORM_RUN_LIMITS: JSON.stringify({ max_concurrent_per_org: 1 }) } });
    ({ api, model, receiver } = services);
    connection = await Connection.connect({ address: stack().temporalAddress });
    temporal = new TemporalClient({ connection });
    org = await newOrg(api);
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    await importAgent(org.client, { name: '@sched/agent', input: TOPIC_SCHEMA });
  });
  after(async () => {
    // Nothing of this suite fires once it is over.
    for (const id of created)
      await temporal?.schedule
        .getHandle(id)
        .delete()
        .catch(() => undefined);
    await connection?.close();
    await services?.stop();
  });

  // Creation is limited to 10 a minute per identity (SPEC 8.2): each test creates with a key of its own.
  let key: Awaited<ReturnType<typeof newKey>>;
  beforeEach(async () => {
    key = await newKey(api, org.client, { name: 'schedules' });
  });

  async function create(body: Record<string, unknown>, client: Client = key.client, agent = '@sched/agent') {
    const res = await client.post(`/api/agents/${agent}/schedules`, { name: 'nightly', cron_expression: '0 3 1 1 *', timezone: 'UTC', ...body });
    if (res.status === 201) created.push(res.body.id);
    return res;
  }

  async function createOk(body: Record<string, unknown>, client: Client = key.client, agent = '@sched/agent') {
    const res = await create(body, client, agent);
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  const fire = (id: string) => fireSchedule(temporal, id);

  it('creates a schedule: 201 with next_run_at computed by Temporal, readable and listed', async () => {
    const s = await createOk({ name: 'new year', cron_expression: '0 3 1 1 *', timezone: 'UTC', input: { topic: 'x' } });
    const year = new Date().getUTCFullYear();
    const next = Date.now() < Date.UTC(year, 0, 1, 3) ? year : year + 1;
    expect(s).to.deep.include({
      object: 'schedule',
      name: 'new year',
      packageId: '@sched/agent',
      spaceId: org.defaultSpaceId,
      enabled: true,
      disabled_reason: null,
      cron_expression: '0 3 1 1 *',
      timezone: 'UTC',
      input: { topic: 'x', depth: 2 }, // schema defaults applied
      next_run_at: new Date(Date.UTC(next, 0, 1, 3)).toISOString(),
      created_by: org.userId,
    });
    expect(s.id).to.match(/^sch_/);
    const read = await org.client.get(`/api/schedules/${s.id}`);
    expect(read.status).to.equal(200);
    expect(read.body).to.deep.equal(s);
    const list = await org.client.get('/api/schedules?limit=1');
    expect(list.status).to.equal(200);
    expect(list.body.data).to.have.length(1);
    expect(list.body.data[0].id).to.equal(s.id); // newest first (paging itself: list-pagination.test.ts)
    const d = await temporal.schedule.getHandle(s.id).describe();
    expect(d.action).to.include({ type: 'startWorkflow', workflowType: 'scheduledRun', taskQueue: 'agent-runs' });
    expect(d.state.paused).to.equal(false);
    // Operators find the schedule by the attributes runs carry.
    expect(d.typedSearchAttributes.get(OrgIdKey)).to.equal(org.orgId);
    expect(d.typedSearchAttributes.get(PackageIdKey)).to.equal('@sched/agent');
  });

  it('refuses an invalid cron, time zone or input with 400 validation_failed naming the field, and creates nothing', async () => {
    const before = (await org.client.get('/api/schedules?limit=100')).body.data.length;
    for (const cron_expression of ['61 * * * *', 'CRON_TZ=Europe/Paris 0 12 * * *', '0 12 * *', 'every day']) {
      const res = await create({ cron_expression });
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors[0].field, cron_expression).to.equal('cron_expression');
    }
    // Refused here, and (a case-mangled alias) by the workflow service.
    for (const timezone of ['Mars/Olympus', '+02:00', 'asia/kolkata']) {
      const tz = await create({ timezone });
      expectProblem(tz, 400, 'validation_failed');
      expect(tz.body.errors[0].field, timezone).to.equal('timezone');
    }
    const input = await create({ input: { topic: 5 } });
    expectProblem(input, 400, 'validation_failed');
    expect(input.body.errors.map((e: any) => e.field)).to.deep.equal(['input.topic']);
    expect((await org.client.get('/api/schedules?limit=100')).body.data.length).to.equal(before);
  });

  it('fires through Temporal: the run executes for the schedule, shows in its runs and succeeds', async () => {
    model.script('tick-marker', [() => toolCall('output', { summary: 'ticked' })]);
    const s = await createOk({ input: { topic: 'tick-marker' } });
    const runId = await fire(s.id);
    expect(runId).to.match(/^run_/);
    // The tick workflow carries them too, so the Temporal UI filters ticks like runs.
    const tick = (await temporal.schedule.getHandle(s.id).describe()).info.recentActions.at(-1)!.action.workflow;
    const ticked = await temporal.workflow.getHandle(tick.workflowId).describe();
    expect(ticked.type).to.equal('scheduledRun');
    expect(ticked.typedSearchAttributes.get(SpaceIdKey)).to.equal(org.defaultSpaceId);
    expect(ticked.typedSearchAttributes.get(PackageIdKey)).to.equal('@sched/agent');
    const runs = await org.client.get(`/api/schedules/${s.id}/runs`);
    expect(runs.status).to.equal(200);
    expect(runs.body.data).to.have.length(1);
    expect(runs.body.data[0]).to.deep.include({ id: runId, scheduleId: s.id, actor: { type: 'schedule', id: s.id }, packageId: '@sched/agent' });
    expect(runs.body.data[0].input).to.deep.equal({ topic: 'tick-marker', depth: 2 });
    const done = await org.client.get(`/api/runs/${runId}?wait=30`);
    expect(done.body.status, done.body.error).to.equal('success');
    expect(done.body.result).to.deep.equal({ output: { summary: 'ticked' } });
  });

  it('computes next_run_at across the DST changes of Europe/Paris', async () => {
    const year = new Date().getUTCFullYear() + 1;
    for (const month0 of [2, 9]) {
      const d = lastSunday(year, month0);
      const next: string[] = [];
      for (const offset of [-1, 1]) {
        const at = new Date(Date.UTC(year, month0, d + offset));
        const [month, day] = [at.getUTCMonth(), at.getUTCDate()];
        const s = await createOk({ cron_expression: `0 12 ${day} ${month + 1} *`, timezone: 'Europe/Paris' });
        expect(s.next_run_at, `${day}/${month + 1}`).to.equal(nextParisNoon(month, day));
        next.push(s.next_run_at);
      }
      // Unless today falls within days of the change (the dates then come sooner, this year),
      // noon in Paris is 11:00 UTC before the spring change and 10:00 after, the reverse in autumn.
      if (next.every((n) => n.startsWith(String(year)))) {
        expect(next.map((n) => n.slice(11, 16))).to.deep.equal(month0 === 2 ? ['11:00', '10:00'] : ['10:00', '11:00']);
      }
    }
  });

  it('PATCH disables (Temporal paused, next_run_at null), enables, and changes cron, time zone and input', async () => {
    const s = await createOk({ cron_expression: '0 9 * * *' });
    expect(s.next_run_at).to.match(/T09:00:00.000Z$/);
    const off = await key.client.patch(`/api/schedules/${s.id}`, { enabled: false });
    expect(off.status, off.text).to.equal(200);
    expect(off.body).to.include({ enabled: false, next_run_at: null, disabled_reason: null });
    expect((await temporal.schedule.getHandle(s.id).describe()).state.paused).to.equal(true);
    const on = await key.client.patch(`/api/schedules/${s.id}`, { enabled: true });
    expect(on.body).to.include({ enabled: true });
    expect(on.body.next_run_at).to.match(/T09:00:00.000Z$/);
    expect((await temporal.schedule.getHandle(s.id).describe()).state.paused).to.equal(false);
    const moved = await key.client.patch(`/api/schedules/${s.id}`, { cron_expression: '30 18 * * *', timezone: 'Asia/Kolkata', name: 'evening' });
    expect(moved.body).to.include({ name: 'evening', cron_expression: '30 18 * * *', timezone: 'Asia/Kolkata' });
    expect(moved.body.next_run_at).to.match(/T13:00:00.000Z$/); // 18:30 at UTC+05:30
    expectProblem(await key.client.patch(`/api/schedules/${s.id}`, { cron_expression: '0 25 * * *' }), 400, 'validation_failed');
    const bad = await key.client.patch(`/api/schedules/${s.id}`, { input: { depth: 'deep' } });
    expectProblem(bad, 400, 'validation_failed');
    expect(bad.body.errors[0].field).to.equal('input.depth');
    const input = await key.client.patch(`/api/schedules/${s.id}`, { input: { topic: 'later' } });
    expect(input.body.input).to.deep.equal({ topic: 'later', depth: 2 });
    expect(input.body.cron_expression).to.equal('30 18 * * *'); // the refused change left it as it was
  });

  it('DELETE removes the Temporal Schedule and the schedule (404 after)', async () => {
    const s = await createOk({});
    const del = await key.client.delete(`/api/schedules/${s.id}`);
    expect(del.status).to.equal(204);
    let gone: unknown;
    await temporal.schedule
      .getHandle(s.id)
      .describe()
      .catch((err) => {
        gone = err;
      });
    expect(gone).to.be.instanceOf(ScheduleNotFoundError);
    expectProblem(await key.client.get(`/api/schedules/${s.id}`), 404, 'not_found');
    expectProblem(await key.client.delete(`/api/schedules/${s.id}`), 404, 'not_found');
  });

  async function expectDisabledFor(id: string, who: { email: string }) {
    const read = await org.client.get(`/api/schedules/${id}`);
    expect(read.body).to.include({ enabled: false, next_run_at: null });
    expect(read.body.disabled_reason).to.match(/^Disabled on \d{4}-\d\d-\d\dT/);
    expect(read.body.disabled_reason).to.contain(who.email).and.contain('no longer has access to run agents in this space');
    const d = await temporal.schedule.getHandle(id).describe();
    expect(d.state).to.include({ paused: true, note: read.body.disabled_reason });
    // A tick after that starts nothing, and the schedule cannot be turned back on.
    expect(await fire(id)).to.equal(null);
    expect((await org.client.get(`/api/schedules/${id}/runs`)).body.data).to.have.length(0);
    expectProblem(await org.client.patch(`/api/schedules/${id}`, { enabled: true }), 409, 'schedule_creator_lost_access');
  }

  it('disables the schedules of a member removed from the organization, with the reason', async () => {
    const member = await newMember(api, org, 'builder', 'leaver');
    const s = await createOk({}, member.client);
    expect(s.created_by).to.equal(member.userId);
    expect((await org.client.delete(`/api/orgs/${org.orgId}/members/${member.userId}`)).status).to.equal(204);
    await expectDisabledFor(s.id, member);
  });

  it('disables the schedules of a member downgraded to viewer, with the reason', async () => {
    const member = await newMember(api, org, 'builder', 'downgraded');
    const s = await createOk({}, member.client);
    const patch = await org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${member.userId}`, { preset_role: 'viewer' });
    expect(patch.status, patch.text).to.equal(200);
    await expectDisabledFor(s.id, member);
  });

  it('records a tick whose input no longer matches the agent as a failed run, announced as run.failed', async () => {
    const hook = await key.client.post('/api/webhooks', { level: 'space', spaceId: org.defaultSpaceId, url: receiver.url('/failed'), events: ['run.failed'] });
    expect(hook.status, hook.text).to.equal(201);
    await importAgent(org.client, { name: '@sched/evolving', input: TOPIC_SCHEMA });
    const s = await createOk({ input: {} }, key.client, '@sched/evolving');
    await importAgent(org.client, { name: '@sched/evolving', version: '2.0.0', input: { ...TOPIC_SCHEMA, required: ['topic'] } });
    const runId = await fire(s.id);
    const run = await org.client.get(`/api/runs/${runId}`);
    expect(run.body).to.deep.include({ status: 'failed', scheduleId: s.id, actor: { type: 'schedule', id: s.id }, version: '2.0.0', startedAt: null });
    expect(run.body.error).to.contain('does not match the input schema of @sched/evolving 2.0.0').and.contain('topic is required');
    await receiver.waitFor(1);
    const event = JSON.parse(receiver.requests.find((r) => r.path === '/failed')!.body);
    expect(event).to.include({ type: 'run.failed' });
    expect(event.data.object).to.include({ id: runId, status: 'failed', packageId: '@sched/evolving', error: run.body.error });
  });

  it('records a tick refused by the organization limits as a failed run', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    model.script('hold-marker', [async () => held.then(() => toolCall('output', { summary: 'released' }))]);
    const busy = await org.client.post('/api/agents/@sched/agent/run', { input: { topic: 'hold-marker' } });
    expect(busy.status, busy.text).to.equal(201);
    try {
      const s = await createOk({ input: { topic: 'limited' } });
      const runId = await fire(s.id);
      const run = await org.client.get(`/api/runs/${runId}`);
      expect(run.body).to.include({ status: 'failed', scheduleId: s.id });
      expect(run.body.error).to.contain('could not start').and.contain('pending or running (limit 1)');
    } finally {
      release();
    }
    expect((await org.client.get(`/api/runs/${busy.body.id}?wait=30`)).body.status).to.equal('success');
  });

  it('records a tick of an agent moved out of the space as a failed run', async () => {
    await importAgent(org.client, { name: '@sched/mover' });
    const s = await createOk({}, key.client, '@sched/mover');
    const team = await org.client.post('/api/spaces', { name: 'Mover home' });
    const moved = await org.client.request('PUT', '/api/packages/@sched/mover/home', { body: { spaceId: team.body.id } });
    expect(moved.status, moved.text).to.equal(200);
    const run = await org.client.get(`/api/runs/${await fire(s.id)}`);
    expect(run.body).to.include({ status: 'failed', scheduleId: s.id });
    expect(run.body.error).to.contain('@sched/mover is no longer available in this space');
  });

  it('checks the creator again at each tick: lost access found there disables the schedule and fails the tick', async () => {
    const member = await newMember(api, org, 'builder', 'unchecked');
    const s = await createOk({}, member.client);
    // A way of losing access that no route re-checks eagerly (none exists today): the row goes.
    await api.knex('space_members').where({ space_id: org.defaultSpaceId, user_id: member.userId }).delete();
    const run = await org.client.get(`/api/runs/${await fire(s.id)}`);
    expect(run.body).to.include({ status: 'failed', scheduleId: s.id });
    expect(run.body.error).to.contain('no longer has access').and.contain(member.email);
    const read = await org.client.get(`/api/schedules/${s.id}`);
    expect(read.body).to.include({ enabled: false });
    expect(run.body.error).to.contain(read.body.disabled_reason);
    await sleep(1000); // tick workflow ids carry the time to the second: the next tick is a new one
    expect(await fire(s.id)).to.equal(null);
    expect((await org.client.get(`/api/schedules/${s.id}/runs`)).body.data).to.have.length(1);
  });

  it('answers 404 to another organization and to another space of the same organization', async () => {
    const s = await createOk({});
    const other = await newOrg(api, 'stranger');
    expectProblem(await other.client.get(`/api/schedules/${s.id}`), 404, 'not_found');
    expectProblem(await other.client.patch(`/api/schedules/${s.id}`, { enabled: false }), 404, 'not_found');
    expectProblem(await other.client.delete(`/api/schedules/${s.id}`), 404, 'not_found');
    expectProblem(await other.client.get(`/api/schedules/${s.id}/runs`), 404, 'not_found');
    expect((await other.client.get('/api/schedules')).body.data).to.deep.equal([]);
    const team = await org.client.post('/api/spaces', { name: 'Schedules team' });
    expect(team.status, team.text).to.equal(201);
    expectProblem(await org.client.with({ 'X-Space-Id': team.body.id }).get(`/api/schedules/${s.id}`), 404, 'not_found');
    expect((await org.client.get(`/api/schedules/${s.id}`)).status).to.equal(200);
  });

  it('needs schedules:write and agents:run to create (403), schedules:read to read', async () => {
    const viewer = await newMember(api, org, 'viewer', 'viewer');
    expectProblem(await create({}, viewer.client), 403, 'forbidden');
    expect((await viewer.client.get('/api/schedules')).status).to.equal(200);
    const member = await newMember(api, org, 'member', 'member');
    expectProblem(await create({}, member.client), 403, 'forbidden'); // agents:run without schedules:write
    const writeOnly = await newKey(api, org.client, { name: 'no run', scopes: ['schedules:read', 'schedules:write'] });
    const res = await create({}, writeOnly.client);
    expectProblem(res, 403, 'forbidden');
    expect(res.body.detail).to.contain('agents:run');
    // The runs of a schedule are runs: reading them needs runs:read as well.
    const s = await createOk({});
    const noRuns = await newKey(api, org.client, { name: 'schedules only', scopes: ['schedules:read'] });
    expect((await noRuns.client.get(`/api/schedules/${s.id}`)).status).to.equal(200);
    expectProblem(await noRuns.client.get(`/api/schedules/${s.id}/runs`), 403, 'forbidden');
  });

  it('needs agents:run, and a person, to change what a schedule runs or when; renaming and disabling need schedules:write only', async () => {
    const s = await createOk({ input: { topic: 'kept' } });
    const writeOnly = await newKey(api, org.client, { name: 'no run', scopes: ['schedules:read', 'schedules:write'] });
    const renamed = await writeOnly.client.patch(`/api/schedules/${s.id}`, { name: 'renamed', enabled: false });
    expect(renamed.status, renamed.text).to.equal(200);
    expect(renamed.body).to.include({ name: 'renamed', enabled: false });
    for (const body of [{ input: { topic: 'swapped' } }, { cron_expression: '* * * * *' }, { timezone: 'Asia/Tokyo' }, { enabled: true }]) {
      const res = await writeOnly.client.patch(`/api/schedules/${s.id}`, body);
      expectProblem(res, 403, 'forbidden');
      expect(res.body.detail).to.contain('agents:run');
    }
    // An end-user is not a person the runs could execute as.
    const endUser = await key.client.post('/api/end-users', { externalId: `sched-${s.id}`, name: 'Customer' });
    expect(endUser.status, endUser.text).to.equal(201);
    const asEndUser = key.client.with({ 'Service-User': endUser.body.id });
    const refused = await asEndUser.patch(`/api/schedules/${s.id}`, { input: { topic: 'swapped' } });
    expectProblem(refused, 403, 'forbidden');
    expect(refused.body.detail).to.contain('end-user');
    const after = await key.client.get(`/api/schedules/${s.id}`);
    expect(after.body).to.include({ name: 'renamed', enabled: false, cron_expression: s.cron_expression, timezone: s.timezone });
    expect(after.body.input).to.deep.equal(s.input);
  });
});
