// Notifications (DESIGN.md 7, issue 16) on the real stack: a failed and a timed-out run notify
// the person who launched them, deleting a connection that disables a schedule notifies the
// schedule's creator, a refused OAuth 2 refresh notifies the connection's owner; only the
// recipient reads or marks them (404 for anyone else, nothing for an end-user); read/unread and
// cursor paging.
import { expect } from 'chai';
import { createOAuth2Activities } from '../../activities/oauth2.ts';
import { loadConfig } from '../../shared/config.ts';
import { createLogger } from '../../shared/log.ts';
import { notifyRunEnded, recordNotification } from '../../shared/notifications/create.ts';
import { insertRefusedRun } from '../../shared/runs/refused.ts';
import { zip } from '../fixtures/packages/build.ts';
import { type Client, newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { agentManifest, importAgent, uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

const SUMMARY_SCHEMA = { type: 'object', required: ['summary'], additionalProperties: false, properties: { summary: { type: 'string' } } };

const CRM = {
  name: '@ntf/crm',
  version: '1.0.0',
  type: 'integration',
  schema_version: '0.3',
  display_name: 'Notification CRM',
  description: 'x',
  auths: {
    main: {
      type: 'custom',
      credentials: { schema: { type: 'object', required: ['api_key'], properties: { api_key: { type: 'string' } } } },
      authorized_uris: ['https://api.crm.test/**'],
      delivery: { http: { in: 'header', name: 'Authorization', prefix: 'Bearer ', value: '{$credential.api_key}' } },
    },
  },
};

async function importManifest(client: Client, manifest: Record<string, unknown>, prompt?: string): Promise<void> {
  const files: Record<string, string> = { 'manifest.json': JSON.stringify(manifest) };
  if (prompt) files['prompt.md'] = prompt;
  const res = await uploadPackage(client, await zip(files));
  if (res.status !== 201) throw new Error(`import of ${manifest.name} failed: ${res.status} ${res.text}`);
}

describe('notifications', function () {
  this.timeout(90_000);
  let api: TestApi;
  let model: FakeModel;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let org: Awaited<ReturnType<typeof newOrg>>;
  const schedules: Array<{ client: Client; id: string }> = [];

  before(async () => {
    model = await new FakeModel().start();
    api = await startTestApi(workerEnv());
    worker = await startTestWorker();
    org = await newOrg(api, 'ntf');
    const created = await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'fake-1', isDefault: true });
    expect(created.status, created.text).to.equal(201);
    await importAgent(org.client, { name: '@ntf/summarizer', output: SUMMARY_SCHEMA, prompt: 'Summarize.' });
    await importAgent(org.client, { name: '@ntf/slow', timeout: 2, output: SUMMARY_SCHEMA });
  });
  after(async () => {
    for (const s of schedules) await s.client.delete(`/api/schedules/${s.id}`).catch(() => undefined);
    await worker?.stop();
    await api?.close();
    await model?.stop();
  });

  async function launch(client: Client, agent: string, input: Record<string, unknown>) {
    const res = await client.post(`/api/agents/${agent}/run`, { input });
    expect(res.status, res.text).to.equal(201);
    const done = await client.get(`/api/runs/${res.body.id}?wait=30`);
    expect(done.status, done.text).to.equal(200);
    return done.body;
  }

  const list = async (client: Client, query = '') => {
    const res = await client.get(`/api/notifications${query}`);
    expect(res.status, res.text).to.equal(200);
    return res.body.data as any[];
  };

  it('a run that fails notifies its launcher once, naming the agent and the reason', async () => {
    model.script('ntf-mismatch', [() => toolCall('output', { summary: 42 })]);
    const run = await launch(org.client, '@ntf/summarizer', { note: 'ntf-mismatch' });
    expect(run.status).to.equal('failed');
    const mine = (await list(org.client)).filter((n) => n.runId === run.id);
    expect(mine).to.have.length(1);
    const n = mine[0];
    expect(n).to.include({ object: 'notification', type: 'run.failed', runId: run.id, scheduleId: null, connectionId: null, readAt: null });
    expect(n.id).to.match(/^ntf_/);
    expect(n.title).to.contain('@ntf/summarizer').and.contain('failed');
    expect(n.body).to.contain('@ntf/summarizer').and.contain('does not match the output schema');
    expect(Date.parse(n.createdAt)).to.be.a('number').and.not.NaN;
    // A retried activity records it again: still one.
    const row = await api.knex('runs').where({ id: run.id }).first();
    expect(await notifyRunEnded(api.knex, row, '@ntf/summarizer')).to.equal(false);
    expect(Number((await api.knex('notifications').where({ run_id: run.id }).count('* as n').first())!.n)).to.equal(1);
  });

  it('a successful run notifies nobody', async () => {
    model.script('ntf-ok', [() => toolCall('output', { summary: 'fine' })]);
    const run = await launch(org.client, '@ntf/summarizer', { note: 'ntf-ok' });
    expect(run.status).to.equal('success');
    expect(await api.knex('notifications').where({ run_id: run.id })).to.have.length(0);
  });

  it('a run that times out notifies run.timeout', async () => {
    model.script('ntf-slow', [async () => new Promise((r) => setTimeout(() => r(toolCall('output', { summary: 'late' })), 4000))]);
    const run = await launch(org.client, '@ntf/slow', { note: 'ntf-slow' });
    expect(run.status).to.equal('timeout');
    const [n] = (await list(org.client)).filter((x) => x.runId === run.id);
    expect(n).to.include({ type: 'run.timeout', runId: run.id });
    expect(n.title).to.contain('@ntf/slow').and.contain('timed out');
    expect(n.body).to.contain('timeout of 2 s');
  });

  it("an API key reads its creator's notifications; an end-user reads none and cannot mark them (404)", async () => {
    const key = await newKey(api, org.client);
    const mine = await list(org.client);
    expect(mine.length).to.be.greaterThan(0);
    expect((await list(key.client)).map((n) => n.id)).to.deep.equal(mine.map((n) => n.id));
    const eu = await key.client.post('/api/end-users', { externalId: `ntf-${Date.now()}`, name: 'Customer' });
    expect(eu.status, eu.text).to.equal(201);
    const asEndUser = key.client.with({ 'Service-User': eu.body.id });
    expect(await list(asEndUser)).to.deep.equal([]);
    expectProblem(await asEndUser.patch(`/api/notifications/${mine[0].id}`, { read: true }), 404, 'not_found');
  });

  it('another member of the space neither sees nor marks them (404)', async () => {
    const member = await newMember(api, org, 'admin', 'ntf-other');
    const [n] = await list(org.client);
    expect(await list(member.client)).to.deep.equal([]);
    expectProblem(await member.client.patch(`/api/notifications/${n.id}`, { read: true }), 404, 'not_found');
    expect((await api.knex('notifications').where({ id: n.id }).first()).read_at).to.equal(null);
    // Another organization: 404 too.
    const stranger = await newOrg(api, 'ntf-stranger');
    expectProblem(await stranger.client.patch(`/api/notifications/${n.id}`, { read: true }), 404, 'not_found');
  });

  it('PATCH {read: true} sets readAt once, {read: false} clears it; unread=true lists the unread', async () => {
    const [n] = await list(org.client);
    const read = await org.client.patch(`/api/notifications/${n.id}`, { read: true });
    expect(read.status, read.text).to.equal(200);
    expect(read.body).to.include({ object: 'notification', id: n.id });
    expect(read.body.readAt).to.be.a('string');
    const again = await org.client.patch(`/api/notifications/${n.id}`, { read: true });
    expect(again.body.readAt).to.equal(read.body.readAt);
    expect((await list(org.client, '?unread=true')).map((x) => x.id)).not.to.include(n.id);
    expect((await list(org.client)).map((x) => x.id)).to.include(n.id);
    const unread = await org.client.patch(`/api/notifications/${n.id}`, { read: false });
    expect(unread.status).to.equal(200);
    expect(unread.body.readAt).to.equal(null);
    expect((await list(org.client, '?unread=true')).map((x) => x.id)).to.include(n.id);
    expectProblem(await org.client.patch(`/api/notifications/${n.id}`, { read: 'yes' }), 400, 'validation_failed');
    expectProblem(await org.client.patch(`/api/notifications/${n.id}`, {}), 400, 'validation_failed');
    expectProblem(await org.client.patch('/api/notifications/ntf_nope', { read: true }), 404, 'not_found');
  });

  it('deleting the connection a schedule used disables it and notifies its creator (schedule.disabled)', async () => {
    const owner = await newOrg(api, 'ntf-sched');
    await importManifest(owner.client, CRM);
    await importManifest(owner.client, agentManifest({ name: '@ntf/crm-agent', dependencies: { integrations: { '@ntf/crm': '^1.0.0' } } }), 'Use the CRM.');
    const conn = await owner.client.post('/api/integrations/@ntf/crm/auths/main/connect/fields', { credentials: { api_key: 'sk-ntf' } });
    expect(conn.status, conn.text).to.be.oneOf([200, 201]);
    const s = await owner.client.post('/api/agents/@ntf/crm-agent/schedules', {
      name: 'nightly crm',
      cron_expression: '0 3 1 1 *',
      timezone: 'UTC',
      input: {},
    });
    expect(s.status, s.text).to.equal(201);
    schedules.push({ client: owner.client, id: s.body.id });
    expect(await list(owner.client)).to.deep.equal([]);
    expect((await owner.client.delete(`/api/connections/${conn.body.id}`)).status).to.equal(204);
    const schedule = (await owner.client.get(`/api/schedules/${s.body.id}`)).body;
    expect(schedule.enabled).to.equal(false);
    const notes = await list(owner.client);
    expect(notes).to.have.length(1);
    expect(notes[0]).to.include({ type: 'schedule.disabled', scheduleId: s.body.id, runId: null, body: schedule.disabled_reason });
    expect(notes[0].title).to.contain('nightly crm');
    expect(notes[0].body).to.contain(conn.body.id);
  });

  it('a schedule disabled because its creator lost access notifies the creator; a refused tick notifies run.failed', async () => {
    const member = await newMember(api, org, 'admin', 'ntf-leaver');
    const s = await member.client.post('/api/agents/@ntf/summarizer/schedules', { name: 'leaver', cron_expression: '0 3 1 1 *', timezone: 'UTC', input: {} });
    expect(s.status, s.text).to.equal(201);
    schedules.push({ client: org.client, id: s.body.id });
    // A refused tick (recorded as a failed run) notifies the person the schedule runs as.
    const pkg = await api.knex('packages').where({ org_id: org.orgId, scope: '@ntf', name: 'summarizer' }).first();
    const runId = `run_ntfrefused${Date.now()}`;
    const refused = {
      id: runId,
      orgId: org.orgId,
      spaceId: org.defaultSpaceId,
      input: {},
      actor: { type: 'schedule' as const, id: s.body.id },
      userId: member.userId,
      scheduleId: s.body.id,
      packageId: pkg.id,
      version: '1.0.0',
      timeoutSeconds: 60,
      error: 'The scheduled run could not start: testing',
    };
    await insertRefusedRun(api.knex, refused);
    await insertRefusedRun(api.knex, refused); // the same tick again: one run, one notification
    const [failed] = await list(member.client);
    expect(failed).to.include({ type: 'run.failed', runId, scheduleId: s.body.id });
    expect(failed.body).to.contain('scheduled run').and.contain('testing');
    expect(await api.knex('notifications').where({ run_id: runId })).to.have.length(1);
    // Removed from the organization: the schedule is disabled and its creator told (in the table;
    // they can no longer read the space).
    const removed = await org.client.delete(`/api/orgs/${org.orgId}/members/${member.userId}`);
    expect(removed.status, removed.text).to.be.oneOf([200, 204]);
    const rows = await api.knex('notifications').where({ user_id: member.userId, type: 'schedule.disabled' });
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ schedule_id: s.body.id, space_id: org.defaultSpaceId });
    expect(rows[0].body).to.contain('no longer has access');
  });

  it('a refused OAuth 2 refresh flags the connection and notifies its owner once (connection.needs_reconnection)', async () => {
    const owner = await newOrg(api, 'ntf-conn');
    await importManifest(owner.client, CRM);
    const conn = await owner.client.post('/api/integrations/@ntf/crm/auths/main/connect/fields', { credentials: { api_key: 'sk-ntf' } });
    expect(conn.status, conn.text).to.be.oneOf([200, 201]);
    // A token that is due: its refresh is refused (this auth has no OAuth 2 client to ask).
    const expiresAt = new Date(Date.now() + 60_000);
    await api.knex('connections').where({ id: conn.body.id }).update({ expires_at: expiresAt });
    const activities = createOAuth2Activities({ knex: api.knex, config: loadConfig(workerEnv()), log: createLogger('silent', 'ntf-test') });
    const input = { connectionId: conn.body.id, orgId: owner.orgId, expiresAt: expiresAt.toISOString() };
    expect(await activities.refreshConnectionToken(input)).to.equal('refused');
    expect(await activities.refreshConnectionToken(input)).to.equal('gone'); // a retry records nothing more
    expect((await owner.client.get(`/api/connections/${conn.body.id}`)).body.needs_reconnection).to.equal(true);
    const notes = await list(owner.client);
    expect(notes).to.have.length(1);
    expect(notes[0]).to.include({ type: 'connection.needs_reconnection', connectionId: conn.body.id, runId: null, scheduleId: null });
    expect(notes[0].title).to.contain('@ntf/crm');
    expect(notes[0].body).to.contain('refused');
  });

  it('pages newest first with startingAfter and a Link rel=next; a foreign cursor is 400', async () => {
    const member = await newMember(api, org, 'member', 'ntf-pager');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      await recordNotification(api.knex, {
        orgId: org.orgId,
        spaceId: org.defaultSpaceId,
        userId: member.userId,
        type: 'run.failed',
        title: `n${i}`,
        body: 'b',
        dedupeKey: `test:${member.userId}:${i}`,
      });
      ids.unshift(
        (
          await api
            .knex('notifications')
            .where({ dedupe_key: `test:${member.userId}:${i}` })
            .first()
        ).id,
      );
    }
    const first = await member.client.get('/api/notifications?limit=2');
    expect(first.status).to.equal(200);
    expect(first.body).to.include({ object: 'list', hasMore: true });
    expect(first.body.data.map((n: any) => n.id)).to.deep.equal(ids.slice(0, 2));
    expect(first.headers.get('link')).to.contain(`startingAfter=${ids[1]}`).and.contain('rel="next"');
    const second = await member.client.get(`/api/notifications?limit=2&startingAfter=${ids[1]}`);
    expect(second.body.data.map((n: any) => n.id)).to.deep.equal(ids.slice(2, 4));
    const last = await member.client.get(`/api/notifications?limit=2&startingAfter=${ids[3]}`);
    expect(last.body).to.include({ hasMore: false });
    expect(last.body.data.map((n: any) => n.id)).to.deep.equal(ids.slice(4));
    // The owner's notification is not a cursor of the member's list.
    const [theirs] = await list(org.client);
    expectProblem(await member.client.get(`/api/notifications?startingAfter=${theirs.id}`), 400, 'validation_failed');
  });

  it('publishes both operations in OpenAPI', async () => {
    const doc = (await org.client.get('/api/openapi.json')).body;
    expect(doc.paths['/api/notifications'].get.operationId).to.equal('listNotifications');
    expect(doc.paths['/api/notifications/{id}'].patch.operationId).to.equal('updateNotification');
  });
});
