// Long-lived reads follow their credential (SPEC 3.2, issue 11): an SSE stream or a long-poll
// ends within 5 s, with a last `event: error` frame naming why, when its API key is revoked or
// expires, its session ends, its user leaves the organization or the space, or its role stops
// granting runs:read; losing runs:read-all narrows a stream to the caller's own runs. Runs are
// launched through the API (no worker: they stay pending) and their log rows are written the
// way workers write them, so every frame comes through the real LISTEN fan-out.
import { expect } from 'chai';
import { appendRunLog } from '../../shared/runs/logs.ts';
import { Client, newKey, newMember, newOrg, PASSWORD, startTestApi, type TestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { Feed } from '../support/sse-feed.ts';

const AGENT = '@rev/echo';
const WITHIN_MS = 5000;

describe('revocation of long-lived reads', function () {
  this.timeout(60_000);
  let api: TestApi;
  let org: Awaited<ReturnType<typeof newOrg>>;
  /** The owner's stream: unaffected by every change below, it must keep flowing. */
  let ownerFeed: Feed;
  const feeds: Feed[] = [];
  const launched: Array<{ id: string; client: Client }> = [];

  async function open(path: string, opts?: { cookie?: string }): Promise<Feed> {
    const f = new Feed(api.url + path, opts);
    feeds.push(f);
    return f.opened();
  }

  async function launch(client: Client): Promise<string> {
    const res = await client.post(`/api/agents/${AGENT}/run`, { input: {} });
    expect(res.status, res.text).to.equal(201);
    launched.push({ id: res.body.id, client });
    return res.body.id;
  }

  async function log(runId: string, message: string): Promise<void> {
    await appendRunLog(api.knex, runId, { level: 'info', type: 'test', message });
  }

  const logged = (runId: string, message: string) => (f: { event: string; data: any }) =>
    f.event === 'run_log' && f.data.runId === runId && f.data.message === message;

  /** `feed` gets the last frame with `code` within 5 s of `since`, and nothing after it. */
  async function expectEnded(feed: Feed, code: string, since: number): Promise<void> {
    const frame = await feed.waitFor((f) => f.event === 'error', WITHIN_MS + 1000, `error frame ${code}`);
    expect(Date.now() - since).to.be.below(WITHIN_MS);
    expect(frame.data).to.deep.equal({ code });
    expect(feed.frames[feed.frames.length - 1]).to.equal(frame);
  }

  /** The owner's stream still receives a new log line of one of its runs. */
  async function ownerStillFlows(runId: string, message: string): Promise<void> {
    await log(runId, message);
    await ownerFeed.waitFor(logged(runId, message), WITHIN_MS, message);
  }

  before(async () => {
    api = await startTestApi();
    org = await newOrg(api, 'rev-owner');
    await importAgent(org.client, { name: AGENT });
  });

  beforeEach(async () => {
    ownerFeed = await open(`/api/realtime/runs?orgId=${org.orgId}&spaceId=${org.defaultSpaceId}`, { cookie: org.client.cookie });
  });

  afterEach(() => {
    for (const f of feeds.splice(0)) f.close();
  });

  after(async () => {
    // Nothing should run these later (another suite's worker polls the same task queue).
    for (const { id } of launched) await org.client.post(`/api/runs/${id}/cancel`);
    await api?.close();
  });

  it('a revoked API key ends its stream with credential_revoked; new runs no longer reach it', async () => {
    const member = await newMember(api, org, 'builder', 'rev-key');
    const key = await newKey(api, member.client);
    const feed = await open(`/api/realtime/runs?token=${key.key}`);
    const before = await launch(org.client);
    await log(before, 'seen before');
    await feed.waitFor(logged(before, 'seen before'), WITHIN_MS, 'log before revocation');

    const t0 = Date.now();
    expect((await member.client.delete(`/api/api-keys/${key.id}`)).status).to.equal(204);
    await expectEnded(feed, 'credential_revoked', t0);

    const after = await launch(org.client);
    await log(after, 'after revocation');
    await ownerStillFlows(after, 'after revocation');
    expect(feed.of(after)).to.deep.equal([]);
    expectProblem(await key.client.get('/api/runs'), 401, 'unauthorized');
  });

  it('an API key that expires ends its stream at its expiry', async () => {
    const key = await newKey(api, org.client, { name: 'short-lived', expiresAt: new Date(Date.now() + 2500).toISOString() });
    const feed = await open(`/api/realtime/runs?token=${key.key}`);
    const expiry = new Date(key.body.expiresAt).getTime();
    await expectEnded(feed, 'credential_revoked', expiry);
    expect(Date.now()).to.be.at.least(expiry);
    const run = await launch(org.client);
    await ownerStillFlows(run, 'after expiry');
  });

  it('signing out ends the session stream; a password change ends the streams of the other sessions', async () => {
    const member = await newMember(api, org, 'member', 'rev-session');
    const cookieStream = (c: Client) => open(`/api/realtime/runs?orgId=${org.orgId}&spaceId=${org.defaultSpaceId}`, { cookie: c.cookie });
    const signedOut = await cookieStream(member.client);
    let t0 = Date.now();
    expect((await member.client.post('/api/auth/sign-out')).status).to.equal(204);
    await expectEnded(signedOut, 'credential_revoked', t0);

    // Two fresh sessions: changing the password from one ends the other's stream only.
    const sessionA = new Client(api.url);
    const sessionB = new Client(api.url);
    for (const c of [sessionA, sessionB]) expect((await c.post('/api/auth/sign-in/email', { email: member.email, password: PASSWORD })).status).to.equal(200);
    const streamA = await cookieStream(sessionA);
    const streamB = await cookieStream(sessionB);
    t0 = Date.now();
    const changed = await sessionB.post('/api/auth/change-password', { currentPassword: PASSWORD, newPassword: `${PASSWORD} 2` });
    expect(changed.status, changed.text).to.equal(200);
    await expectEnded(streamA, 'credential_revoked', t0);
    const run = await launch(sessionB.with({ 'X-Org-Id': org.orgId, 'X-Space-Id': org.defaultSpaceId }));
    await log(run, 'still B');
    await streamB.waitFor(logged(run, 'still B'), WITHIN_MS, 'log on the session that changed the password');
    expect(streamB.frames.some((f) => f.event === 'error')).to.equal(false);
  });

  it('a member removed from the organization: the session stream ends access_changed, the key stream credential_revoked', async () => {
    const member = await newMember(api, org, 'builder', 'rev-removed');
    const key = await newKey(api, member.client);
    const sessionFeed = await open(`/api/realtime/runs?orgId=${org.orgId}&spaceId=${org.defaultSpaceId}`, { cookie: member.client.cookie });
    const keyFeed = await open(`/api/realtime/runs?token=${key.key}`);
    const t0 = Date.now();
    expect((await org.client.delete(`/api/orgs/${org.orgId}/members/${member.userId}`)).status).to.equal(204);
    await expectEnded(sessionFeed, 'access_changed', t0);
    await expectEnded(keyFeed, 'credential_revoked', t0);
    const run = await launch(org.client);
    await ownerStillFlows(run, 'after removal');
  });

  it('leaving the space, or a role without runs:read, ends the stream with access_changed', async () => {
    const leaver = await newMember(api, org, 'member', 'rev-leaver');
    const leaverFeed = await open(`/api/realtime/runs?orgId=${org.orgId}&spaceId=${org.defaultSpaceId}`, { cookie: leaver.client.cookie });
    let t0 = Date.now();
    expect((await org.client.delete(`/api/spaces/${org.defaultSpaceId}/members/${leaver.userId}`)).status).to.equal(204);
    await expectEnded(leaverFeed, 'access_changed', t0);

    const role = await org.client.post(`/api/orgs/${org.orgId}/roles`, { name: 'agents only', scopes: ['agents:read'] });
    expect(role.status, role.text).to.equal(201);
    const downgraded = await newMember(api, org, 'member', 'rev-downgraded');
    const feed = await open(`/api/realtime/runs?orgId=${org.orgId}&spaceId=${org.defaultSpaceId}`, { cookie: downgraded.client.cookie });
    t0 = Date.now();
    const patched = await org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${downgraded.userId}`, { custom_role_id: role.body.id });
    expect(patched.status, patched.text).to.equal(200);
    await expectEnded(feed, 'access_changed', t0);
    const run = await launch(org.client);
    await ownerStillFlows(run, 'after downgrade');
  });

  it("losing runs:read-all narrows a stream to the caller's own runs at once, without ending it", async () => {
    const builder = await newMember(api, org, 'builder', 'rev-narrowed');
    const feed = await open(`/api/realtime/runs?orgId=${org.orgId}&spaceId=${org.defaultSpaceId}`, { cookie: builder.client.cookie });
    const others = await launch(org.client);
    const own = await launch(builder.client);
    await log(others, 'others before');
    await feed.waitFor(logged(others, 'others before'), WITHIN_MS, "another's run while holding runs:read-all");

    expect((await org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${builder.userId}`, { preset_role: 'member' })).status).to.equal(200);
    // Give the change its moment, then the owner's next line must not reach the narrowed stream.
    await new Promise((r) => setTimeout(r, 500));
    await ownerStillFlows(others, 'others after');
    await log(own, 'own after');
    await feed.waitFor(logged(own, 'own after'), WITHIN_MS, 'own run after narrowing');
    expect(feed.frames.some(logged(others, 'others after'))).to.equal(false);
    expect(feed.frames.some((f) => f.event === 'error')).to.equal(false);
  });

  it('a single-run stream of a run the caller can no longer read ends with access_changed', async () => {
    const builder = await newMember(api, org, 'builder', 'rev-single');
    const others = await launch(org.client);
    const feed = await open(`/api/realtime/runs/${others}?orgId=${org.orgId}&spaceId=${org.defaultSpaceId}`, { cookie: builder.client.cookie });
    const t0 = Date.now();
    expect((await org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${builder.userId}`, { preset_role: 'member' })).status).to.equal(200);
    await expectEnded(feed, 'access_changed', t0);
  });

  it('a long-poll ends at once: 401 when its key is revoked, 403 when its user leaves the space, 404 when the run is no longer readable', async () => {
    const member = await newMember(api, org, 'builder', 'rev-wait');
    const key = await newKey(api, member.client);
    const run = await launch(org.client);
    const timed = async (poll: Promise<any>, change: () => Promise<unknown>) => {
      await new Promise((r) => setTimeout(r, 300)); // the poll is waiting
      const t0 = Date.now();
      await change();
      const res = await poll;
      expect(Date.now() - t0).to.be.below(WITHIN_MS);
      return res;
    };

    const byKey = key.client.get(`/api/runs/${run}?wait=50`);
    expectProblem(await timed(byKey, () => member.client.delete(`/api/api-keys/${key.id}`)), 401, 'unauthorized');

    const narrowed = member.client.get(`/api/runs/${run}?wait=50`);
    expectProblem(
      await timed(narrowed, () => org.client.patch(`/api/spaces/${org.defaultSpaceId}/members/${member.userId}`, { preset_role: 'member' })),
      404,
      'not_found',
    );

    const own = await launch(member.client);
    const bySession = member.client.get(`/api/runs/${own}?wait=50`);
    expectProblem(await timed(bySession, () => org.client.delete(`/api/spaces/${org.defaultSpaceId}/members/${member.userId}`)), 403, 'forbidden');
  });
});
