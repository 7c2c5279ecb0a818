// Issue 31, DESIGN.md 9: `api-call` on the sandbox's PATH. A script the agent runs calls a fake
// third party on 127.0.0.1 through the sidecar's socket; the credential reaches the third party,
// injected outside the sandbox by the `api_call` tool's code (authorized_uris, redaction, log
// lines, the journal), while no process environment or command line inside the sandbox (scanned
// from inside while a call is in flight), no file of the workspace and no argument holds it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { newOrg } from '../support/api.ts';
import { lastToolResult, toolCall } from '../support/fake-model.ts';
import { agentManifest, authorizationAuth, importIntegration, importManifest } from '../support/packages.ts';
import { addFakeModel, type RunServices, startRunServices } from '../support/run-services.ts';
import { createKnex } from '../../shared/db/knex.ts';
import { stack } from '../support/stack.ts';

const TOKEN = `tok-${randomBytes(12).toString('hex')}`;
const HEADER_VALUE = `Token ${TOKEN}`;

describe('agents that run code: api-call from programs (issue 31)', function () {
  this.timeout(120_000);
  let services: RunServices;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let target: http.Server;
  let port = 0;
  const hits: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders; body: string }> = [];

  before(async () => {
    target = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      hits.push({ method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      // Slow enough for the script to look at every process of its sandbox meanwhile.
      if (req.url?.startsWith('/v1/slow')) await new Promise((r) => setTimeout(r, 1500));
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ auth: req.headers.authorization, method: req.method, got: Buffer.concat(chunks).toString('utf8') }));
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    port = (target.address() as AddressInfo).port;
    services = await startRunServices({ output: { done: true } });
    org = await newOrg(services.api, 'codeapicall');
    await addFakeModel(org.client, services.model);
    await importIntegration(
      org.client,
      '@codeapi/crm',
      'CRM',
      { main: authorizationAuth([`http://127.0.0.1:${port}/v1/**`], 'token', 'Token ') },
      { _meta: { 'dev.service/api': {} } },
    );
    await importManifest(
      org.client,
      {
        ...agentManifest({
          name: '@codeapi/agent',
          runtimeTools: ['output', 'bash'],
          input: { type: 'object', properties: { case: { type: 'string' } } },
          dependencies: { integrations: { '@codeapi/crm': '^1.0.0' } },
        }),
        integrations_configuration: { '@codeapi/crm': { tools: ['api_call'] } },
      },
      'Run the script.',
    );
    const conn = await org.client.post('/api/integrations/@codeapi/crm/auths/main/connect/fields', { credentials: { token: TOKEN } });
    expect(conn.status, conn.text).to.equal(201);
  });
  after(async () => {
    await services?.stop();
    await new Promise<void>((r) => (target ? target.close(() => r()) : r()));
  });

  it('delivers the credential to the third party while nothing in the sandbox holds it', async () => {
    const marker = `apicall-${randomBytes(4).toString('hex')}`;
    const base = `http://127.0.0.1:${port}/v1`;
    // A script, as a skill would ship one: calls in order, a call in flight while it scans /proc,
    // a refused target, a usage error; then everything it can see goes to output/ for the test.
    const script = [
      'set -u',
      `api-call @codeapi/crm GET ${base}/contacts?page=1 > first.json 2> first.err; echo "get=$?"`,
      'printf \'{"name":"Ada"}\' > body.json',
      `api-call @codeapi/crm POST ${base}/contacts -H 'Content-Type: application/json' --data @body.json > second.json 2> second.err; echo "post=$?"`,
      `echo piped | api-call @codeapi/crm PUT ${base}/notes --data - > third.json 2>/dev/null; echo "put=$?"`,
      `api-call @codeapi/crm GET ${base}/slow > slow.json 2>/dev/null & sleep 0.7`,
      "for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; tr '\\0' ' ' < $p/cmdline; echo; done > output/processes.txt 2>/dev/null",
      'wait',
      `api-call @codeapi/crm GET https://example.com/v1/x 2> refused.err; echo "refused=$?"`,
      `api-call @codeapi/crm GET 2> usage.err; echo "usage=$?"`,
      "find /workspace -type f -not -path '/workspace/output/*' -not -path '/workspace/input/*' | sort | xargs cat > output/workspace.txt",
      'cat first.err second.err refused.err usage.err',
    ].join('\n');
    let result: any;
    services.model.script(marker, [
      () => toolCall('bash', { command: script }),
      (req) => {
        result = JSON.parse(lastToolResult(req));
        return toolCall('output', { done: true });
      },
    ]);
    const before = hits.length;
    const res = await org.client.post('/api/agents/@codeapi/agent/run', { input: { case: marker } });
    expect(res.status, res.text).to.equal(201);
    const done = (await org.client.get(`/api/runs/${res.body.id}?wait=60`)).body;
    expect(done.status, done.error).to.equal('success');

    // Exit codes: 0 for answers, 1 for a refusal, 2 for a usage error; `HTTP <status>` on stderr.
    expect(result.stdout).to.include('get=0\npost=0\nput=0\nrefused=1\nusage=2\n');
    expect(result.stdout).to.include('HTTP 201\nHTTP 201\n');
    expect(result.stdout).to.match(/api-call: api_call refused \(unauthorized_target\)/);
    expect(result.stdout).to.include('usage: api-call <integration> <METHOD> <url>');

    // The third party got each call with the credential, the method, headers and bodies asked for.
    const got = hits.slice(before);
    expect(got.map((h) => `${h.method} ${h.path}`)).to.deep.equal(['GET /v1/contacts?page=1', 'POST /v1/contacts', 'PUT /v1/notes', 'GET /v1/slow']);
    for (const h of got) expect(h.headers.authorization).to.equal(HEADER_VALUE);
    expect(got[1].headers['content-type']).to.equal('application/json');
    expect(got[1].body).to.equal('{"name":"Ada"}');
    expect(got[2].body).to.equal('piped\n');

    // What the sandbox holds: answers redacted; no environment, command line or file with the token.
    const files = Object.fromEntries(
      await Promise.all(
        done.files
          .filter((f: any) => f.origin === 'output')
          .map(async (f: any) => [f.name, (await org.client.get(`/api/files/${f.id}/content`)).text] as const),
      ),
    );
    expect(files['processes.txt'], 'the scan saw the command in flight').to.include('AGENT_COMMAND_ID=').and.include('--api-call @codeapi/crm GET');
    expect(files['processes.txt']).to.not.include(TOKEN);
    expect(files['workspace.txt'], 'the answers are in the workspace').to.include('[redacted]').and.include('"got":"{\\"name\\":\\"Ada\\"}"');
    expect(files['workspace.txt']).to.not.include(TOKEN);
    expect(JSON.stringify(result)).to.not.include(TOKEN);

    // The log: one command line, and each call's api_call line as the tool writes it.
    const logs = (await org.client.get(`/api/runs/${done.id}/logs`)).body.data as any[];
    expect(logs.filter((l) => l.kind === 'command')).to.have.length(1);
    const calls = logs.filter((l) => l.kind === 'api_call').map((l) => `${l.level} ${l.message}`);
    expect(calls).to.have.length(5);
    expect(calls[0]).to.match(new RegExp(`^info GET ${base.replace(/\./g, '\\.')}/contacts\\?page=1 -> 201 in \\d+ ms$`));
    expect(calls[4]).to.match(/^warn GET https:\/\/example\.com\/v1\/x refused \(unauthorized_target\)/);
    expect(JSON.stringify(logs)).to.not.include(TOKEN);

    // Journaled by the command: program steps keyed by the bash call and the call's ordinal.
    const knex = createKnex(stack().databaseUrl, { min: 0, max: 1 });
    try {
      const steps = await knex('run_steps').where({ run_id: done.id }).orderBy('seq').select('kind', 'name', 'response');
      expect(steps.map((s) => `${s.kind}:${s.name}`)).to.deep.equal([
        'model:fake-1',
        'program:api_call',
        'program:api_call',
        'program:api_call',
        'program:api_call',
        'program:api_call',
        'tool:bash',
        'model:fake-1',
        'tool:output',
      ]);
      expect(JSON.stringify(steps)).to.not.include(TOKEN);
    } finally {
      await knex.destroy();
    }
  });
});
