// Issue 17, DESIGN.md 7: the chat module. A chat session is a `chatSession` workflow taking each
// message as an update; the agent answers in its sandbox with the conversation so far, read from
// Postgres. Through HTTP on the real stack with a real worker process that the test kills.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Client, newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, type RecordedRequest, textAnswer } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { Feed } from '../support/sse-feed.ts';
import { spawnWorkerProcess, workerEnv } from '../support/worker.ts';

describe('chat sessions (chat module)', function () {
  this.timeout(180_000);
  let api: TestApi;
  let model: FakeModel;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let worker: ChildProcess | undefined;
  const feeds: Feed[] = [];

  function startWorker(): void {
    worker = spawnWorkerProcess();
  }

  async function killWorker(): Promise<void> {
    const child = worker;
    worker = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }

  function feed(client: Client, orgId: string, spaceId: string): Promise<Feed> {
    const f = new Feed(`${api.url}/api/realtime/runs?orgId=${orgId}&spaceId=${spaceId}&channels=chat_session_update`, { cookie: client.cookie });
    feeds.push(f);
    return f.opened();
  }

  /** The model requests of a session whose first message holds `marker`. */
  function requestsFor(marker: string): RecordedRequest[] {
    return model.requests.filter((r) => JSON.stringify(r.body.messages?.find((m: any) => m.role === 'user') ?? '').includes(marker));
  }

  async function open(client = org.client): Promise<any> {
    const res = await client.post('/api/chat/sessions', { packageId: '@chat/helper' });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  /** Polls the messages until the session holds `count` of them. */
  async function messagesWhen(client: Client, id: string, count: number, ms = 60_000): Promise<any[]> {
    const deadline = Date.now() + ms;
    for (;;) {
      const res = await client.get(`/api/chat/sessions/${id}/messages`);
      expect(res.status, res.text).to.equal(200);
      if (res.body.data.length >= count || Date.now() > deadline) return res.body.data;
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  before(async () => {
    model = await new FakeModel().start();
    api = await startTestApi(workerEnv());
    org = await newOrg(api, 'chat-owner');
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    await importAgent(org.client, { name: '@chat/helper', prompt: 'You are a helpful assistant.', timeout: 60 });
    startWorker();
  });

  after(async () => {
    for (const f of feeds) f.es.close();
    await killWorker();
    await api?.close();
    await model?.stop();
  });

  it('answers each message with the conversation so far, records usage, and signals only the owner', async () => {
    const marker = `alpha-${randomBytes(4).toString('hex')}`;
    model.script(marker, [() => textAnswer('Hello! How can I help?'), () => textAnswer('Paris is the capital of France.')]);
    const other = await newMember(api, org, 'admin', 'chat-other');
    const ownerFeed = await feed(org.client, org.orgId, org.defaultSpaceId);
    const otherFeed = await feed(other.client, org.orgId, org.defaultSpaceId);

    const session = await open();
    expect(session).to.include({ object: 'chat_session', packageId: '@chat/helper', version: '1.0.0', status: 'idle', messageCount: 0 });
    expect(session.id).to.match(/^chs_/);

    const first = await org.client.post(`/api/chat/sessions/${session.id}/messages`, { content: `Hi there ${marker}` });
    expect(first.status, first.text).to.equal(200);
    expect(first.body.object).to.equal('chat_exchange');
    expect(first.body.message).to.include({
      object: 'chat_message',
      role: 'user',
      seq: 1,
      content: `Hi there ${marker}`,
      status: 'completed',
      sessionId: session.id,
    });
    expect(first.body.reply).to.include({
      role: 'assistant',
      seq: 2,
      content: 'Hello! How can I help?',
      status: 'completed',
      error: null,
      replyTo: first.body.message.id,
    });
    expect(first.body.reply.usage).to.include({ inputTokens: 12, outputTokens: 3 });

    const second = await org.client.post(`/api/chat/sessions/${session.id}/messages`, { content: 'What is the capital of France?' });
    expect(second.status, second.text).to.equal(200);
    expect(second.body.reply).to.include({ seq: 4, content: 'Paris is the capital of France.' });

    // The second turn's model request carries the first exchange, after the agent's prompt.
    const calls = requestsFor(marker);
    expect(calls).to.have.length(2);
    const sent = calls[1].body.messages.map((m: any) => [m.role, m.content]);
    expect(sent[0][0]).to.equal('system');
    expect(sent[0][1]).to.include('You are a helpful assistant.');
    expect(sent.slice(1)).to.deep.equal([
      ['user', `Hi there ${marker}`],
      ['assistant', 'Hello! How can I help?'],
      ['user', 'What is the capital of France?'],
    ]);
    expect(calls[1].body.tools, 'a chat turn offers no tools').to.equal(undefined);

    const listed = await org.client.get(`/api/chat/sessions/${session.id}/messages`);
    expect(listed.body.data.map((m: any) => [m.seq, m.role])).to.deep.equal([
      [1, 'user'],
      [2, 'assistant'],
      [3, 'user'],
      [4, 'assistant'],
    ]);
    const since = await org.client.get(`/api/chat/sessions/${session.id}/messages?since=2&limit=1`);
    expect(since.body.data.map((m: any) => m.seq)).to.deep.equal([3]);
    expect(since.body.hasMore).to.equal(true);
    expect(since.headers.get('link')).to.include('since=3');

    const sessions = await org.client.get('/api/chat/sessions');
    const mine = sessions.body.data.find((s: any) => s.id === session.id);
    expect(mine).to.include({ status: 'idle', messageCount: 4 });
    expect(mine.usage).to.include({ inputTokens: 24, outputTokens: 6 });
    expect(mine.usage.costUsd).to.be.closeTo(2 * first.body.reply.usage.costUsd, 1e-9);

    // The owner's stream saw the session change (idle with 4 messages at the end); the other person's did not.
    await ownerFeed.waitFor((f) => f.event === 'chat_session_update' && f.data.session.id === session.id && f.data.session.messageCount === 4);
    const frames = ownerFeed.frames.filter((f) => f.event === 'chat_session_update' && f.data.session.id === session.id);
    expect(frames.length).to.be.at.least(2);
    expect(frames[0].data.object).to.equal('chat_session_update');
    await new Promise((r) => setTimeout(r, 500));
    expect(otherFeed.frames.filter((f) => f.event === 'chat_session_update')).to.deep.equal([]);
  });

  it("renders the agent's prompt as a Mustache template, as runs do (issue 30)", async () => {
    await importAgent(org.client, {
      name: '@chat/templated',
      prompt: 'You serve session {{runId}} with {{timeout}} s per turn.{{#checkpoint}} Pin: {{.}}{{/checkpoint}}',
      timeout: 45,
    });
    const marker = `tmpl-${randomBytes(4).toString('hex')}`;
    model.script(marker, [() => textAnswer('ok')]);
    const opened = await org.client.post('/api/chat/sessions', { packageId: '@chat/templated' });
    expect(opened.status, opened.text).to.equal(201);
    const res = await org.client.post(`/api/chat/sessions/${opened.body.id}/messages`, { content: `Hello ${marker}` });
    expect(res.status, res.text).to.equal(200);
    const [call] = requestsFor(marker);
    const system = call.body.messages[0];
    expect(system.role).to.equal('system');
    expect(system.content).to.include(`You serve session ${opened.body.id} with 45 s per turn.`);
    expect(system.content).to.not.include('{{');
  });

  it("lists the caller's sessions newest first with a cursor, and hides them from everyone else", async () => {
    const a = await open();
    const b = await open();
    const page = await org.client.get('/api/chat/sessions?limit=1');
    expect(page.status).to.equal(200);
    expect(page.body.data.map((s: any) => s.id)).to.deep.equal([b.id]);
    expect(page.body.hasMore).to.equal(true);
    expect(page.headers.get('link')).to.include(`startingAfter=${b.id}`);
    const next = await org.client.get(`/api/chat/sessions?limit=1&startingAfter=${b.id}`);
    expect(next.body.data.map((s: any) => s.id)).to.deep.equal([a.id]);

    // Another person of the space: none of the owner's sessions, 404 on them.
    const other = await newMember(api, org, 'admin', 'chat-peer');
    const theirs = await other.client.get('/api/chat/sessions');
    expect(theirs.status).to.equal(200);
    expect(theirs.body.data).to.deep.equal([]);
    expect((await other.client.get(`/api/chat/sessions/${a.id}/messages`)).status).to.equal(404);
    expect((await other.client.post(`/api/chat/sessions/${a.id}/messages`, { content: 'hi' })).status).to.equal(404);

    // Sessions only: an API key is refused, no credential is 401.
    const key = await newKey(api, org.client);
    expect((await key.client.get('/api/chat/sessions')).status).to.equal(403);
    expect((await key.client.post('/api/chat/sessions', { packageId: '@chat/helper' })).status).to.equal(403);
    expect((await new Client(api.url).get('/api/chat/sessions')).status).to.equal(401);
    // An agent the space cannot see is 404; a malformed id 400.
    expect((await org.client.post('/api/chat/sessions', { packageId: '@chat/nobody' })).status).to.equal(404);
    expect((await org.client.post('/api/chat/sessions', { packageId: 'helper' })).status).to.equal(400);
    // A viewer may not run agents, so may not chat.
    const viewer = await newMember(api, org, 'viewer', 'chat-viewer');
    expect((await viewer.client.post('/api/chat/sessions', { packageId: '@chat/helper' })).status).to.equal(403);
  });

  it('survives a worker restart and takes a message sent while no worker runs', async () => {
    const marker = `bravo-${randomBytes(4).toString('hex')}`;
    model.script(marker, [() => textAnswer('one'), () => textAnswer('two'), () => textAnswer('three')]);
    const session = await open();
    const first = await org.client.post(`/api/chat/sessions/${session.id}/messages`, { content: `first ${marker}` });
    expect(first.status, first.text).to.equal(200);

    await killWorker();
    startWorker();
    const second = await org.client.post(`/api/chat/sessions/${session.id}/messages`, { content: 'second' });
    expect(second.status, second.text).to.equal(200);
    expect(second.body.reply.content).to.equal('two');

    // No worker at all: the message is stored and held, the session is responding, another message waits its turn.
    await killWorker();
    const third = await org.client.post(`/api/chat/sessions/${session.id}/messages?wait=1`, { content: 'third' });
    expect(third.status, third.text).to.equal(202);
    expect(third.body.reply).to.equal(null);
    expect(third.body.message).to.include({ seq: 5, content: 'third' });
    const busy = await org.client.post(`/api/chat/sessions/${session.id}/messages`, { content: 'too soon' });
    expect(busy.status).to.equal(409);
    const listed = await org.client.get('/api/chat/sessions');
    expect(listed.body.data.find((s: any) => s.id === session.id).status).to.equal('responding');

    startWorker();
    const messages = await messagesWhen(org.client, session.id, 6, 90_000);
    expect(messages.map((m: any) => m.content)).to.deep.equal([`first ${marker}`, 'one', 'second', 'two', 'third', 'three']);
    const calls = requestsFor(marker);
    expect(calls).to.have.length(3);
    expect(calls[2].body.messages.slice(1).map((m: any) => m.content)).to.deep.equal([`first ${marker}`, 'one', 'second', 'two', 'third']);
  });

  it('survives an API restart', async () => {
    const marker = `charlie-${randomBytes(4).toString('hex')}`;
    model.script(marker, [() => textAnswer('before'), () => textAnswer('after')]);
    const session = await open();
    expect((await org.client.post(`/api/chat/sessions/${session.id}/messages`, { content: `hello ${marker}` })).status).to.equal(200);
    await api.close();
    api = await startTestApi(workerEnv());
    const client = new Client(api.url, org.client.defaults);
    client.cookie = org.client.cookie;
    const res = await client.post(`/api/chat/sessions/${session.id}/messages`, { content: 'again' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.reply.content).to.equal('after');
    const calls = requestsFor(marker);
    expect(calls[1].body.messages.slice(1).map((m: any) => m.content)).to.deep.equal([`hello ${marker}`, 'before', 'again']);
  });
});
