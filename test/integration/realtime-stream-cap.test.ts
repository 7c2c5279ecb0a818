// DESIGN.md 5, issue 28: one identity (API key, session user, end-user) holds at most
// REALTIME_MAX_STREAMS_PER_IDENTITY open realtime streams (default 100); one more is 429
// `rate_limited` naming the limit. A slot is freed whichever way a stream ends.
import http from 'node:http';
import { expect } from 'chai';
import { Client, newKey, newMember, newOrg, PASSWORD, startTestApi, type TestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { workerEnv } from '../support/worker.ts';

interface Opened {
  status: number;
  headers: Headers;
  /** A refused stream's problem document. */
  body: any;
  /** The frames read so far (an open stream). */
  text: string;
  close(): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens one stream on its own connection; resolves once its first frame (or its refusal) arrived. */
function openStream(url: string, headers: Record<string, string> = {}): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers }, (res) => {
      const opened: Opened = {
        status: res.statusCode!,
        headers: new Headers(res.headers as Record<string, string>),
        body: undefined,
        text: '',
        close: () => req.destroy(),
      };
      res.setEncoding('utf8');
      res.on('error', () => undefined);
      res.on('data', (chunk: string) => {
        opened.text += chunk;
        if (res.statusCode === 200) resolve(opened);
      });
      res.on('end', () => {
        if (res.statusCode !== 200) opened.body = JSON.parse(opened.text);
        resolve(opened);
      });
    });
    req.on('error', reject);
  });
}

describe('realtime streams per identity', function () {
  this.timeout(120_000);
  let api: TestApi;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let runId: string;
  const open: Opened[] = [];

  async function stream(url: string, headers?: Record<string, string>): Promise<Opened> {
    const s = await openStream(url, headers);
    open.push(s);
    return s;
  }

  /** Opens a stream, retrying while the server has not yet seen an earlier one close. */
  async function streamOnceFreed(url: string, headers?: Record<string, string>): Promise<Opened> {
    for (let i = 0; ; i++) {
      const s = await stream(url, headers);
      if (s.status !== 429 || i === 100) return s;
      await sleep(50);
    }
  }

  before(async () => {
    api = await startTestApi(workerEnv());
    org = await newOrg(api, 'cap');
    await importAgent(org.client, { name: '@cap/agent' });
    // No worker: the run stays pending, a target for a single-run stream.
    const launched = await org.client.post('/api/agents/@cap/agent/run', { input: {} });
    expect(launched.status, launched.text).to.equal(201);
    runId = launched.body.id;
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  after(async () => {
    await api?.close();
  });

  it('the 101st stream of one key is 429 rate_limited naming the limit; other identities are unaffected; a closed stream frees its slot', async () => {
    const a = await newKey(api, org.client, { name: 'cap a' });
    const of = (path: string, key = a.key) => `${api.url}${path}${path.includes('?') ? '&' : '?'}token=${key}`;
    // The limit holds across the three routes together.
    const held = [await stream(of(`/api/realtime/runs/${runId}`)), await stream(of('/api/realtime/agents/%40cap%2Fagent/runs'))];
    for (let i = 0; i < 98; i++) held.push(await stream(of('/api/realtime/runs')));
    expect(held.map((s) => s.status)).to.deep.equal(new Array(100).fill(200));
    expect(api.realtimeStreams()).to.equal(100);

    for (const path of ['/api/realtime/runs', `/api/realtime/runs/${runId}`, '/api/realtime/agents/%40cap%2Fagent/runs']) {
      const refused = await stream(of(path));
      expectProblem(refused, 429, 'rate_limited');
      expect(refused.body.detail).to.equal(
        'This identity already holds 100 open realtime streams, the most REALTIME_MAX_STREAMS_PER_IDENTITY allows; close one before opening another',
      );
      expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
      expect(refused.headers.get('ratelimit')).to.match(/^limit=100, remaining=0, reset=\d+$/);
    }
    expect(api.realtimeStreams()).to.equal(100);

    // Another key, and the session of the key's creator, are other identities.
    const b = await newKey(api, org.client, { name: 'cap b' });
    expect((await stream(of('/api/realtime/runs', b.key))).status).to.equal(200);
    const session = await stream(`${api.url}/api/realtime/runs?orgId=${org.orgId}&spaceId=${org.defaultSpaceId}`, { cookie: org.client.cookie! });
    expect(session.status).to.equal(200);

    held[50].close();
    expect((await streamOnceFreed(of('/api/realtime/runs'))).status).to.equal(200);
    expect((await stream(of('/api/realtime/runs'))).status).to.equal(429);
  });

  describe('with REALTIME_MAX_STREAMS_PER_IDENTITY=2', () => {
    let small: TestApi;
    before(async () => {
      small = await startTestApi(workerEnv({ REALTIME_MAX_STREAMS_PER_IDENTITY: '2' }));
    });
    after(async () => {
      await small?.close();
    });

    it('frees the slot of a stream refused before streaming, of one whose client left early, and of one the server ended', async () => {
      const key = await newKey(api, org.client, { name: 'cap small' });
      const of = (path: string) => `${small.url}${path}${path.includes('?') ? '&' : '?'}token=${key.key}`;

      // Refused before streaming (an unknown run, an unknown agent): no slot is kept.
      for (let i = 0; i < 3; i++) {
        expect((await stream(of('/api/realtime/runs/run_unknown'))).status).to.equal(404);
        expect((await stream(of('/api/realtime/agents/%40cap%2Fnone/runs'))).status).to.equal(404);
      }
      // Clients that leave while their request is still being authenticated: each after an access
      // change (a revoked key), so the credential is looked up in the database again.
      for (let i = 0; i < 5; i++) {
        const spare = await newKey(api, org.client, { name: `cap spare ${i}` });
        expect((await org.client.delete(`/api/api-keys/${spare.id}`)).status).to.equal(204);
        const req = http.get(of('/api/realtime/runs'), { agent: false });
        req.on('error', () => undefined);
        req.on('finish', () => req.destroy());
      }
      await sleep(500);
      const first = await streamOnceFreed(of('/api/realtime/runs'));
      const second = await stream(of('/api/realtime/runs'));
      expect([first.status, second.status]).to.deep.equal([200, 200]);
      expect((await stream(of('/api/realtime/runs'))).status).to.equal(429);

      // Ended by the server: a session signed out ends its streams (credential_revoked); the same
      // person signed in again opens as many as before.
      const member = await newMember(api, org, 'viewer', 'cap-member');
      const sessionUrl = `${small.url}/api/realtime/runs?orgId=${org.orgId}&spaceId=${org.defaultSpaceId}`;
      const cookie = () => ({ cookie: member.client.cookie! });
      const streams = [await stream(sessionUrl, cookie()), await stream(sessionUrl, cookie())];
      expect(streams.map((s) => s.status)).to.deep.equal([200, 200]);
      expect((await stream(sessionUrl, cookie())).status).to.equal(429);
      expect((await member.client.post('/api/auth/sign-out')).status).to.be.oneOf([200, 204]);
      const again = new Client(small.url);
      const signIn = await again.post('/api/auth/sign-in/email', { email: member.email, password: PASSWORD });
      expect(signIn.status, signIn.text).to.equal(200);
      for (let i = 0; i < 100 && !streams.every((s) => s.text.includes('credential_revoked')); i++) await sleep(50);
      expect(streams.every((s) => s.text.includes('credential_revoked'))).to.equal(true);
      const reopened = [await streamOnceFreed(sessionUrl, { cookie: again.cookie! }), await stream(sessionUrl, { cookie: again.cookie! })];
      expect(reopened.map((s) => s.status)).to.deep.equal([200, 200]);
    });
  });
});
