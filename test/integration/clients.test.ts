// A real client of this interface that no one here wrote (Appstrate's GitHub Action) works
// unchanged: it names the launch version in the query, streams with `?token=&verbose=true` and
// reads the run. And no route drops a query parameter it does not declare (DESIGN 5).
import { expect } from 'chai';
import { type Client, newKey, newOrg, type TestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { type RunServices, startRunServices, addFakeModel } from '../support/run-services.ts';
import { Feed } from '../support/sse-feed.ts';

const AGENT = '@clients/agent';
const VERSIONS = ['1.0.0', '1.0.3', '1.1.0'];
const OUTPUT = { type: 'object', required: ['summary'], properties: { summary: { type: 'string' } } };

describe('real clients', function () {
  this.timeout(60_000);
  let services: RunServices;
  let api: TestApi;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let key: Awaited<ReturnType<typeof newKey>>;

  before(async () => {
    services = await startRunServices({ output: { summary: 'done' } });
    api = services.api;
    org = await newOrg(api, 'clients');
    await addFakeModel(org.client, services.model, { model: 'm', apiKey: undefined });
    for (const version of VERSIONS) await importAgent(org.client, { name: AGENT, version, output: OUTPUT });
    key = await newKey(api, org.client, { name: 'github action' });
  });
  after(async () => {
    await services?.stop();
  });

  async function launch(client: Client, query: string, body: Record<string, unknown> = { input: {} }) {
    const res = await client.post(`/api/agents/${AGENT}/run${query}`, body);
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  const done = async (id: string) => (await key.client.get(`/api/runs/${id}?wait=30`)).body;

  it('launches the version named by ?version= (exact, dist-tag, range); the body wins over the query', async () => {
    expect((await launch(key.client, '')).version).to.equal('1.1.0');
    expect((await launch(key.client, '?version=1.0.0')).version).to.equal('1.0.0');
    expect((await launch(key.client, '?version=latest')).version).to.equal('1.1.0');
    expect((await launch(key.client, `?version=${encodeURIComponent('~1.0.0')}`)).version).to.equal('1.0.3');
    expect((await launch(key.client, `?version=${encodeURIComponent('<1.1.0')}`)).version).to.equal('1.0.3');
    expect((await launch(key.client, '?version=1.0.0', { input: {}, version: '~1.0.0' })).version).to.equal('1.0.3');
    expect((await launch(key.client, '?version=1.0.0', { input: {}, version: 'latest' })).version).to.equal('1.1.0');
    expectProblem(await key.client.post(`/api/agents/${AGENT}/run?version=9.9.9`, { input: {} }), 404, 'not_found');
    expectProblem(await key.client.post(`/api/agents/${AGENT}/run?version=`, { input: {} }), 400, 'validation_failed');
  });

  it('runs the whole client flow: launch with ?version=, stream with ?token=&verbose=true, read the run', async () => {
    const run = await launch(key.client, '?version=1.0.0');
    const feed = await new Feed(`${api.url}/api/realtime/runs/${run.id}?token=${key.key}&verbose=true`).opened();
    try {
      await feed.waitFor((f) => f.event === 'run_update' && f.data.id === run.id && f.data.status === 'success', 30_000, 'terminal run_update');
    } finally {
      feed.close();
    }
    const read = await key.client.get(`/api/runs/${run.id}`);
    expect(read.status, read.text).to.equal(200);
    expect(read.body).to.include({ version: '1.0.0', status: 'success', error: null });
    expect(read.body.result).to.deep.equal({ output: { summary: 'done' } });
    expect(read.body.duration).to.be.a('number');
  });

  it('keeps the documented SSE parameters: token, orgId, spaceId, channels, verbose', async () => {
    const byKey = await new Feed(`${api.url}/api/realtime/runs?token=${key.key}&channels=run_update&verbose=true`).opened();
    const bySession = await new Feed(`${api.url}/api/realtime/runs?orgId=${org.orgId}&spaceId=${org.defaultSpaceId}&channels=run_update`, {
      cookie: org.client.cookie,
    }).opened();
    try {
      const run = await launch(key.client, '');
      for (const feed of [byKey, bySession]) await feed.waitFor((f) => f.event === 'run_update' && f.data.id === run.id, 30_000, 'run_update');
      expect([...byKey.frames, ...bySession.frames].every((f) => f.event === 'run_update' || f.event === 'ping')).to.equal(true);
      await done(run.id);
    } finally {
      byKey.close();
      bySession.close();
    }
    // Anything else on a stream is refused like on any route, before the stream starts.
    const extra = await key.client.get(`/api/realtime/runs?token=${key.key}&verbos=true`);
    expectProblem(extra, 400, 'validation_failed');
    expect(extra.body.param).to.equal('verbos');
  });

  it('answers 400 naming a query parameter the route does not declare, on every kind of route', async () => {
    const run = await launch(key.client, '');
    const hook = await org.client.post('/api/webhooks', {
      level: 'space',
      spaceId: org.defaultSpaceId,
      url: services.receiver.url('/x'),
      events: ['run.success'],
    });
    expect(hook.status, hook.text).to.equal(201);
    const before = (await org.client.get('/api/runs?limit=100')).body.total;
    const cases: Array<[string, () => Promise<any>, string]> = [
      ['list', () => key.client.get('/api/runs?statuss=success'), 'statuss'],
      ['read', () => key.client.get(`/api/runs/${run.id}?wiat=5`), 'wiat'],
      // Only SSE routes read `token`: elsewhere it is refused, not ignored.
      ['read', () => key.client.get(`/api/runs/${run.id}?token=${key.key}`), 'token'],
      ['launch', () => key.client.post(`/api/agents/${AGENT}/run?agent-version=1.0.0`, { input: {} }), 'agent-version'],
      ['remote launch', () => key.client.post('/api/runs/remote?ttl=60', { packageId: AGENT }), 'ttl'],
      ['inline launch', () => key.client.post('/api/runs/inline?version=1.0.0', { manifest: {}, prompt: 'x', input: {} }), 'version'],
      [
        'webhook create',
        () =>
          org.client.post('/api/webhooks?dryRun=true', {
            level: 'space',
            spaceId: org.defaultSpaceId,
            url: services.receiver.url('/y'),
            events: ['run.success'],
          }),
        'dryRun',
      ],
      ['webhook update', () => org.client.patch(`/api/webhooks/${hook.body.id}?force=1`, { enabled: false }), 'force'],
    ];
    for (const [kind, call, param] of cases) {
      const res = await call();
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.param, kind).to.equal(param);
      expect(res.body.errors, kind).to.deep.include({ field: param, code: 'unknown_field', message: `${param} is not a query parameter of this operation` });
    }
    // Nothing was done by the refused writes.
    expect((await org.client.get('/api/runs?limit=100')).body.total).to.equal(before);
    expect((await org.client.get(`/api/webhooks/${hook.body.id}`)).body.enabled).to.equal(true);
    await done(run.id);
  });

  it('takes ?version= on remote runs too (the body wins), and a run that never started has a null duration', async () => {
    const remote = await key.client.post('/api/runs/remote?version=1.0.0', { packageId: AGENT });
    expect(remote.status, remote.text).to.equal(201);
    expect(remote.body.version).to.equal('1.0.0');
    const bodyWins = await key.client.post('/api/runs/remote?version=1.0.0', { packageId: AGENT, version: '1.1.0' });
    expect(bodyWins.body.version).to.equal('1.1.0');
    for (const id of [remote.body.id, bodyWins.body.id]) {
      expect((await key.client.post(`/api/runs/${id}/cancel`)).status).to.equal(202);
      const ended = await done(id);
      expect(ended).to.include({ status: 'cancelled', startedAt: null, duration: null });
    }
  });

  it('publishes version as a query parameter and a body property of both launches, and every parameter the server reads', async () => {
    const doc = (await org.client.get('/api/openapi.json')).body;
    for (const path of ['/api/agents/{scope}/{name}/run', '/api/runs/remote']) {
      const op = doc.paths[path].post;
      expect(
        op.parameters.find((p: any) => p.in === 'query' && p.name === 'version'),
        path,
      ).to.deep.include({ required: false });
      expect(op.requestBody.content['application/json'].schema.properties.version.type, path).to.equal('string');
    }
    const queryOf = (path: string, method = 'get') => doc.paths[path][method].parameters.filter((p: any) => p.in === 'query').map((p: any) => p.name);
    expect(queryOf('/api/realtime/runs/{id}')).to.have.members(['token', 'orgId', 'spaceId', 'channels', 'verbose']);
    expect(queryOf('/api/runs/{id}')).to.deep.equal(['wait']);
    const duration = doc.paths['/api/runs/{id}'].get.responses['200'].content['application/json'].schema.properties.duration;
    expect(duration.type).to.deep.equal(['integer', 'null']);
    expect(duration.description).to.contain('never started');
  });
});
