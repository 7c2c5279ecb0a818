// Issue 31, DESIGN.md 9: a chat turn of an agent that lists `bash` offers the same tools as its
// runs: the model runs a command in the turn's sandbox and answers with what it printed. An agent
// without `bash` is still offered no tool (chat.test.ts).
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { newOrg } from '../support/api.ts';
import { lastToolResult, type RecordedRequest, textAnswer, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { addFakeModel, type ModelServices, startModelServices } from '../support/run-services.ts';

describe('agents that run code: chat turns (issue 31)', function () {
  this.timeout(120_000);
  let services: ModelServices;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    services = await startModelServices();
    org = await newOrg(services.api, 'codechat');
    await addFakeModel(org.client, services.model);
    await importAgent(org.client, { name: '@codechat/shell', prompt: 'You help with files.', runtimeTools: ['bash'], timeout: 60 });
  });
  after(async () => {
    await services?.stop();
  });

  it('runs a command in the turn and answers with its output', async () => {
    const marker = `chat-${randomBytes(4).toString('hex')}`;
    const seen: RecordedRequest[] = [];
    let result: any;
    services.model.script(marker, [
      (req) => {
        seen.push(req);
        return toolCall('bash', { command: 'echo "sum=$((2+3))"; pwd; api-call @any/thing GET http://example.com 2>&1; echo "api-call=$?"' });
      },
      (req) => {
        seen.push(req);
        result = JSON.parse(lastToolResult(req));
        return textAnswer(`The shell says ${result.stdout.split('\n')[0]}`);
      },
    ]);
    const session = await org.client.post('/api/chat/sessions', { packageId: '@codechat/shell' });
    expect(session.status, session.text).to.equal(201);
    const sent = await org.client.post(`/api/chat/sessions/${session.body.id}/messages`, { content: `Add two and three ${marker}` });
    expect(sent.status, sent.text).to.equal(200);
    expect(sent.body.reply).to.include({ status: 'completed', content: 'The shell says sum=5', error: null });

    const offered = seen[0].body.tools.map((t: any) => t.function.name).sort();
    expect(offered).to.deep.equal(['bash', 'edit_file', 'list_files', 'read_file', 'write_file']);
    expect(seen[0].body.messages[0].content).to.include('You help with files.').and.include('`bash` runs commands in /workspace');
    expect(result.exit_code).to.equal(0);
    // A turn has no integrations to call: api-call says so and fails.
    expect(result.stdout).to.equal('sum=5\n/workspace\napi-call: api-call is not available in chat turns\napi-call=1\n');
  });
});
