// The sidecar's `api_call` tool (DESIGN.md 7, issue 13) in real runs: the scripted model calls a
// fake third-party API on 127.0.0.1 with the run's connection injected per delivery.http; the
// model, the run log and the sandboxed runtime never see the credential; refusals are tool
// results and `warn` entries; redirects are not followed.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { zip } from '../fixtures/packages/build.ts';
import { type Client, newOrg } from '../support/api.ts';
import { type RecordedRequest, toolCall } from '../support/fake-model.ts';
import { agentManifest, uploadPackage } from '../support/packages.ts';
import { type RunServices, startRunServices } from '../support/run-services.ts';

const TOKEN = `tok-${randomBytes(12).toString('hex')}`;
const ACCOUNT = 'acct-4242';
const HEADER_VALUE = `Token key=${TOKEN};acct=${ACCOUNT}`;
const INPUT = { type: 'object', properties: { case: { type: 'string' } } };

async function importManifest(client: Client, manifest: Record<string, unknown>): Promise<void> {
  const files: Record<string, string> = { 'manifest.json': JSON.stringify(manifest) };
  if (manifest.type === 'agent') files['prompt.md'] = 'Call the API.';
  const res = await uploadPackage(client, await zip(files));
  if (res.status !== 201) throw new Error(`import of ${manifest.name} failed: ${res.status} ${res.text}`);
}

/** The last tool result the model was sent. */
function lastToolResult(req: RecordedRequest): string {
  const msgs = req.body.messages as Array<{ role: string; content: string }>;
  return [...msgs].reverse().find((m) => m.role === 'tool')!.content;
}

/** pid -> parent pid, for every process of the host. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      out.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone
    }
  }
  return out;
}

function descendants(of: number): number[] {
  const pp = parents();
  const out: number[] = [];
  const isUnder = (pid: number): boolean => {
    for (let p = pp.get(pid); p && p > 1; p = pp.get(p)) if (p === of) return true;
    return false;
  };
  for (const pid of pp.keys()) if (isUnder(pid)) out.push(pid);
  return out;
}

const read = (p: string) => {
  try {
    return fs.readFileSync(p);
  } catch {
    return Buffer.alloc(0);
  }
};

/** Readable memory of a process, region by region (root reads another uid's memory). */
/**
 * Whether the process's readable memory holds each needle. Asynchronous reads with a turn of the
 * event loop between regions: the worker under test shares this process, and a scan that held
 * the loop for its heartbeat timeout (10 s, reached on a loaded machine) would have its run's
 * attempt retried beside the live one.
 */
async function memoryContains(pid: number, needles: string[]): Promise<boolean[]> {
  const found = needles.map(() => false);
  const fh = await fs.promises.open(`/proc/${pid}/mem`, 'r');
  try {
    for (const line of (await fs.promises.readFile(`/proc/${pid}/maps`, 'utf8')).split('\n')) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) (r)/.exec(line);
      if (!m) continue;
      const start = Number.parseInt(m[1], 16);
      const size = Math.min(Number.parseInt(m[2], 16) - start, 256 * 1024 * 1024);
      const buf = Buffer.alloc(size);
      try {
        await fh.read(buf, 0, size, start);
      } catch {
        continue;
      }
      needles.forEach((n, i) => {
        if (!found[i] && buf.includes(n)) found[i] = true;
      });
      await new Promise((r) => setImmediate(r));
    }
  } finally {
    await fh.close();
  }
  return found;
}

/** Every file under `dir` (as a sandboxed process sees it through /proc/<pid>/root). */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  let entries: fs.Dirent[] = [];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/**
 * What the run's sandbox holds while its runtime waits for the model (after api_call answered):
 * each sandboxed process's environment and command line, the processes visible inside its pid
 * namespace, the files it can reach under /workspace, /sidecar, /runtime, /tmp, and the whole
 * readable memory of every runtime. The warm pool keeps runtimes waiting beside the one serving
 * the run, and pids wrap around, so the serving runtime is the one holding `control` (a string
 * the run's runtime must hold: it proves the memory scan works); no runtime may hold a secret.
 */
async function inspectSandbox(control: string) {
  const mine = descendants(process.pid);
  // The sandboxed node (argv[0] as bwrap execs it), not bwrap or the shell that name it too.
  const runtime = mine.filter((pid) => read(`/proc/${pid}/cmdline`).toString().split('\0')[0] === '/opt/node/node');
  const envs = mine.map((pid) => read(`/proc/${pid}/environ`).toString() + read(`/proc/${pid}/cmdline`).toString());
  const scans: boolean[][] = [];
  for (const pid of runtime) scans.push(await memoryContains(pid, [TOKEN, HEADER_VALUE, control]));
  const tokenInMemory = scans.some((s) => s[0]);
  const headerInMemory = scans.some((s) => s[1]);
  const serving = runtime[scans.findIndex((s) => s[2])];
  const controlInMemory = serving !== undefined;
  const root = `/proc/${serving ?? runtime[0]}/root`;
  const files = ['/workspace', '/sidecar', '/runtime', '/tmp'].flatMap((d) => filesUnder(root + d));
  const fileText = files.map((f) => read(f).toString('latin1')).join('\n');
  const inside = fs.readdirSync(`${root}/proc`).filter((d) => /^\d+$/.test(d));
  const insideEnv = inside.map((d) => read(`${root}/proc/${d}/environ`).toString() + read(`${root}/proc/${d}/cmdline`).toString());
  return { runtime, envs, files, fileText, inside, insideEnv, tokenInMemory, headerInMemory, controlInMemory };
}

describe('api_call (credentials used without being seen)', function () {
  this.timeout(90_000);
  let services: RunServices;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let target: http.Server;
  let port = 0;
  const hits: Array<{ path: string; headers: http.IncomingHttpHeaders }> = [];
  const at = (p: string) => hits.filter((h) => h.path.split('?')[0] === p);

  before(async () => {
    target = http.createServer((req, res) => {
      hits.push({ path: req.url ?? '/', headers: req.headers });
      const p = (req.url ?? '/').split('?')[0];
      if (p === '/v1/echo') {
        res.writeHead(200, { 'content-type': 'application/json', 'x-echo': String(req.headers['x-acme-auth']), 'set-cookie': 'sid=abc; HttpOnly' });
        res.end(JSON.stringify({ auth: req.headers['x-acme-auth'], token_alone: TOKEN, url: req.url }));
      } else if (p === '/v1/redirect') {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/v1/landed` });
        res.end();
      } else if (p === '/v1/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('b'.repeat(120 * 1024));
      } else if (p === '/v1/huge') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('h'.repeat(300 * 1024));
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`reached ${p}`);
      }
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    port = (target.address() as AddressInfo).port;
    services = await startRunServices({ output: { done: true }, workerEnv: { CREDENTIAL_PROXY_LIMITS: JSON.stringify({ max_response_bytes: 200 * 1024 }) } });
    org = await newOrg(services.api, 'apicall');
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: services.model.url, model: 'm', isDefault: true });
    await importManifest(org.client, {
      name: '@acme/api',
      version: '1.0.0',
      type: 'integration',
      schema_version: '0.3',
      display_name: 'Acme API',
      description: 'x',
      _meta: { 'dev.service/api': {} },
      auths: {
        main: {
          type: 'custom',
          credentials: {
            schema: { type: 'object', required: ['api_key', 'account'], properties: { api_key: { type: 'string' }, account: { type: 'string' } } },
          },
          authorized_uris: [`http://127.0.0.1:${port}/**`, `http://localhost:${port}/**`],
          delivery: { http: { in: 'header', name: 'X-Acme-Auth', prefix: 'Token ', value: 'key={$credential.api_key};acct={$credential.account}' } },
        },
      },
    });
    const depends = { integrations: { '@acme/api': '^1.0.0' } };
    await importManifest(org.client, {
      ...agentManifest({ name: '@apicall/agent', input: INPUT, dependencies: depends }),
      integrations_configuration: {
        '@acme/api': { tools: ['api_call'], authorized_uris: [`http://127.0.0.1:${port}/v1/**`, `http://localhost:${port}/v1/**`] },
      },
    });
    await importManifest(org.client, {
      ...agentManifest({ name: '@apicall/without', input: INPUT, dependencies: depends }),
      integrations_configuration: { '@acme/api': { tools: [] } },
    });
    const conn = await org.client.post('/api/integrations/@acme/api/auths/main/connect/fields', { credentials: { api_key: TOKEN, account: ACCOUNT } });
    expect(conn.status, conn.text).to.equal(201);
    expect(conn.text).not.to.contain(TOKEN);
  });
  after(async () => {
    await services?.stop();
    await new Promise<void>((r) => (target ? target.close(() => r()) : r()));
  });

  async function runToEnd(agent: string, marker: string) {
    const res = await org.client.post(`/api/agents/${agent}/run`, { input: { case: marker } });
    expect(res.status, res.text).to.equal(201);
    const done = await org.client.get(`/api/runs/${res.body.id}?wait=30`);
    expect(done.body.status, done.body.error).to.equal('success');
    const logs = await org.client.get(`/api/runs/${res.body.id}/logs`);
    return { run: done.body, logs: logs.body.data as Array<{ level: string; kind: string; message: string }> };
  }

  it('injects the credential per delivery.http; the model, the log and the sandbox never see it', async () => {
    const marker = `echo-${randomBytes(4).toString('hex')}`;
    const seen: RecordedRequest[] = [];
    let sandbox: Awaited<ReturnType<typeof inspectSandbox>> | undefined;
    services.model.script(marker, [
      (req) => {
        seen.push(req);
        return toolCall('api_call', { integration: '@acme/api', method: 'GET', url: `http://127.0.0.1:${port}/v1/echo?account=${ACCOUNT}` });
      },
      async (req) => {
        seen.push(req);
        // The runtime holds the tool result and waits for this answer: look into its sandbox now.
        sandbox = await inspectSandbox(marker);
        return toolCall('output', { done: true });
      },
    ]);
    const { logs } = await runToEnd('@apicall/agent', marker);

    // The offered tool: one api_call whose integration is an enum of the qualifying ids.
    const tool = seen[0].body.tools.find((t: any) => t.function.name === 'api_call');
    expect(tool.function.parameters.properties.integration.enum).to.deep.equal(['@acme/api']);
    expect(JSON.stringify(seen[0].body)).not.to.contain(TOKEN);

    // Injected per delivery.http: name, prefix and template.
    const echo = at('/v1/echo');
    expect(echo).to.have.length(1);
    expect(echo[0].headers['x-acme-auth']).to.equal(HEADER_VALUE);

    // What the model saw: the echo redacted, set-cookie removed.
    const result = JSON.parse(lastToolResult(seen[1]));
    expect(result.status).to.equal(200);
    expect(result.headers['x-echo']).to.equal('[redacted]');
    expect(result.headers).not.to.have.property('set-cookie');
    expect(JSON.parse(result.body)).to.deep.equal({ auth: '[redacted]', token_alone: '[redacted]', url: '/v1/echo?account=[redacted]' });
    expect(lastToolResult(seen[1])).not.to.contain(ACCOUNT); // the model wrote it in its URL; the result hides it
    expect(JSON.stringify(seen[1].body)).not.to.contain(TOKEN);

    // The run log: one api_call entry with method, redacted URL, status and duration.
    const entries = logs.filter((l) => l.kind === 'api_call');
    expect(entries).to.have.length(1);
    expect(entries[0].level).to.equal('info');
    expect(entries[0].message).to.match(new RegExp(`^GET http://127\\.0\\.0\\.1:${port}/v1/echo\\?account=\\[redacted\\] -> 200 in \\d+ ms$`));
    expect(JSON.stringify(logs)).not.to.contain(TOKEN).and.not.to.contain(ACCOUNT);

    // The sandbox: environment, command lines, processes inside, reachable files and memory.
    expect(sandbox, 'the sandbox was inspected').to.not.equal(undefined);
    const s = sandbox!;
    expect(s.runtime, 'the runtime process').to.have.length.greaterThan(0);
    // First: the files and processes below are the serving runtime's only once it was found.
    expect(s.controlInMemory, 'the memory scan finds what the runtime holds').to.equal(true);
    expect(s.envs.join('\n')).not.to.contain(TOKEN);
    expect(s.insideEnv.join('\n')).not.to.contain(TOKEN);
    expect(s.inside.length, 'processes visible inside').to.be.lessThan(5);
    expect(
      s.files.some((f) => f.endsWith('/runtime/main.mjs')),
      'files were walked',
    ).to.equal(true);
    expect(s.fileText).not.to.contain(TOKEN);
    expect(s.tokenInMemory, 'token in the runtime memory').to.equal(false);
    expect(s.headerInMemory, 'header value in the runtime memory').to.equal(false);
  });

  it('refuses targets outside authorized_uris and private addresses, follows no redirect, cuts and caps bodies, without failing the run', async () => {
    const marker = `refuse-${randomBytes(4).toString('hex')}`;
    const results: string[] = [];
    const call = (url: string) => (req: RecordedRequest) => {
      if (req.body.messages.some((m: any) => m.role === 'tool')) results.push(lastToolResult(req));
      return toolCall('api_call', { integration: '@acme/api', method: 'GET', url });
    };
    services.model.script(marker, [
      call('https://example.com/v1/x'), // outside the integration's authorized_uris
      call(`http://127.0.0.1:${port}/admin`), // inside the integration's, outside the agent's narrower list
      call(`http://localhost:${port}/v1/echo`), // authorized, but a name resolving to a private address
      call(`http://127.0.0.1:${port}/v1/redirect`),
      call(`http://127.0.0.1:${port}/v1/big`),
      call(`http://127.0.0.1:${port}/v1/huge`),
      (req) => {
        results.push(lastToolResult(req));
        return toolCall('output', { done: true });
      },
    ]);
    const before = hits.length;
    const { logs } = await runToEnd('@apicall/agent', marker);
    expect(results).to.have.length(6);
    expect(results[0]).to.match(/^api_call refused \(unauthorized_target\)/);
    expect(results[1]).to.match(/^api_call refused \(unauthorized_target\)/);
    expect(results[2]).to.match(/^api_call refused \(blocked_address\)/);
    const redirect = JSON.parse(results[3]);
    expect(redirect.status).to.equal(302);
    expect(redirect.headers.location).to.equal(`http://127.0.0.1:${port}/v1/landed`);
    const big = JSON.parse(results[4]);
    expect(big.body).to.have.length(100 * 1024);
    expect(big.body_truncated).to.deep.equal({ shown_bytes: 100 * 1024, total_bytes: 120 * 1024 });
    expect(results[5]).to.match(/^api_call refused \(response_too_large\)/);
    // Only the redirect, the big and the huge body reached the target; the redirect was not followed.
    expect(hits.slice(before).map((h) => h.path)).to.deep.equal(['/v1/redirect', '/v1/big', '/v1/huge']);
    expect(at('/v1/landed')).to.have.length(0);
    const entries = logs.filter((l) => l.kind === 'api_call').map((l) => `${l.level} ${l.message}`);
    expect(entries).to.have.length(6);
    expect(entries[0]).to.match(/^warn GET https:\/\/example\.com\/v1\/x refused \(unauthorized_target\) after \d+ ms/);
    expect(entries[1]).to.match(/^warn GET .*\/admin refused \(unauthorized_target\)/);
    expect(entries[2]).to.match(/^warn GET .*localhost.* refused \(blocked_address\)/);
    expect(entries[3]).to.match(/^info GET .*\/v1\/redirect -> 302 in \d+ ms$/);
    expect(entries[4]).to.match(/^info GET .*\/v1\/big -> 200 in \d+ ms$/);
    expect(entries[5]).to.match(/^warn GET .*\/v1\/huge refused \(response_too_large\)/);
    expect(JSON.stringify(logs)).not.to.contain(TOKEN);
  });

  it('offers no api_call when integrations_configuration[id].tools leaves it out', async () => {
    const marker = `without-${randomBytes(4).toString('hex')}`;
    const seen: RecordedRequest[] = [];
    services.model.script(marker, [
      (req) => {
        seen.push(req);
        return toolCall('api_call', { integration: '@acme/api', method: 'GET', url: `http://127.0.0.1:${port}/v1/echo` });
      },
      (req) => {
        seen.push(req);
        return toolCall('output', { done: true });
      },
    ]);
    const before = hits.length;
    await runToEnd('@apicall/without', marker);
    expect(seen[0].body.tools.map((t: any) => t.function.name)).not.to.include('api_call');
    expect(lastToolResult(seen[1])).to.match(/^Unknown tool "api_call"/);
    expect(hits.length).to.equal(before);
  });
});
