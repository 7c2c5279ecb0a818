// Credential delivery: the latency it adds. p50 of sequential GETs through
// /api/credential-proxy/proxy (session check, connection lookup, decryption, egress check,
// injection, redaction) and through the sidecar's `api_call` (activities/sidecar/api-call.ts,
// in this process: the run's connection read and decrypted, the checks, injection, redaction;
// its log line not written), each against direct undici GETs over kept-alive connections to
// the same local target, plain HTTP and HTTPS (where a new connection per call costs a TLS
// handshake). API and worker run as processes of their own. Writes JSON under
// test/bench/results/.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { type ApiIntegration, apiCall } from '../../activities/sidecar/api-call.ts';
import { loadConfig } from '../../shared/config.ts';
import { createKnex } from '../../shared/db/knex.ts';
import { findIntegration } from '../../shared/integrations/auths.ts';
import type { RunRow } from '../../shared/runs/model.ts';
import { zip } from '../fixtures/packages/build.ts';
import { mochaGlobalSetup, mochaGlobalTeardown } from '../setup/global.ts';
import { newKey, newOrg } from '../support/api.ts';
import { uploadPackage } from '../support/packages.ts';
import { HttpsReceiver } from '../support/receiver.ts';
import { stack } from '../support/stack.ts';
import { workerEnv } from '../support/worker.ts';
import { startServiceProcesses } from './processes.ts';
import { pct, printTable, type Row, resultsOf, say, writeResult } from './report.ts';

const CALLS = 300;
const WARMUP = 20;

say('starting the stack...');
await mochaGlobalSetup();
const answer = (_req: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
const plain = http.createServer(answer);
await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
// The HTTPS target uses the receiver's self-signed certificate, trusted through NODE_EXTRA_CA_CERTS.
const cert = new HttpsReceiver();
const tls = https.createServer({ key: fs.readFileSync((cert as unknown as { keyFile: string }).keyFile), cert: fs.readFileSync(cert.caFile) }, answer);
await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
const targets = {
  http: `http://127.0.0.1:${(plain.address() as AddressInfo).port}`,
  https: `https://127.0.0.1:${(tls.address() as AddressInfo).port}`,
};
const env = { NODE_EXTRA_CA_CERTS: cert.caFile, CREDENTIAL_PROXY_LIMITS: JSON.stringify({ rate_per_min: 100000 }) };
const service = await startServiceProcesses(env);
const api = { url: service.apiUrl };

const org = await newOrg(api, 'bench');
const connections: Record<string, string> = {};
for (const [kind, base] of Object.entries(targets)) {
  const manifest = {
    name: `@bench/${kind}`,
    version: '1.0.0',
    type: 'integration',
    schema_version: '0.3',
    display_name: `Bench target (${kind})`,
    description: 'bench integration',
    auths: {
      main: {
        type: 'custom',
        credentials: { schema: { type: 'object', required: ['token'], properties: { token: { type: 'string' } } } },
        authorized_uris: [`${base}/**`],
        delivery: { http: { in: 'header', name: 'Authorization', prefix: 'Bearer ' } },
      },
    },
  };
  const imported = await uploadPackage(org.client, await zip({ 'manifest.json': JSON.stringify(manifest) }));
  if (imported.status !== 201) throw new Error(`import: ${imported.status} ${imported.text}`);
  const conn = await org.client.post(`/api/integrations/@bench/${kind}/auths/main/connect/fields`, { credentials: { token: 'bench-token-123456' } });
  if (conn.status !== 201) throw new Error(`connect: ${conn.status} ${conn.text}`);
  connections[`@bench/${kind}`] = conn.body.id;
}
const { key, client } = await newKey(api, org.client, { name: 'bench proxy' });
const session = await client.post('/api/credential-proxy/sessions', {});
if (session.status !== 201) throw new Error(`session: ${session.status} ${session.text}`);

// `api_call` as the worker's sidecar makes it, with the run's connections.
const knex = createKnex(stack().databaseUrl, { min: 0, max: 2 });
const config = loadConfig(workerEnv(env));
const integrations: ApiIntegration[] = [];
for (const id of Object.keys(connections)) {
  const integration = await findIntegration(knex, org.orgId, org.defaultSpaceId, '@bench', id.slice('@bench/'.length));
  if (!integration) throw new Error(`no integration ${id}`);
  integrations.push({ id, integration, authKey: null });
}
const run = { id: 'run_bench', org_id: org.orgId, space_id: org.defaultSpaceId, connections } as unknown as RunRow;
const sidecar = { knex, config, run, integrations, log: async () => undefined };

const dispatcher = new Agent({ connect: { ca: [fs.readFileSync(cert.caFile, 'utf8')] } });
async function timed(call: () => Promise<number>): Promise<number> {
  const t0 = performance.now();
  const status = await call();
  if (status !== 200) throw new Error(`status ${status}`);
  return performance.now() - t0;
}
const get =
  (url: string, headers: Record<string, string> = {}) =>
  async () => {
    const res = await request(url, { headers, dispatcher });
    await res.body.dump();
    return res.statusCode;
  };
const viaApiCall = (integration: string, url: string) => async () =>
  JSON.parse((await apiCall(sidecar, { integration, method: 'GET', url })).content).status as number;

const rows: Row[] = [];
for (const [kind, base] of Object.entries(targets)) {
  say(`${kind}: ${CALLS} GETs through the proxy, through api_call and direct, one at a time...`);
  const proxied = {
    authorization: `Bearer ${key}`,
    'X-Integration-Id': `@bench/${kind}`,
    'X-Target': `${base}/v1/item`,
    'X-Session-Id': session.body.id as string,
  };
  const viaProxy: number[] = [];
  const viaTool: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < CALLS + WARMUP; i++) {
    const p = await timed(get(`${api.url}/api/credential-proxy/proxy`, proxied));
    const t = await timed(viaApiCall(`@bench/${kind}`, `${base}/v1/item`));
    const d = await timed(get(`${base}/v1/item`));
    if (i >= WARMUP) {
      viaProxy.push(p);
      viaTool.push(t);
      direct.push(d);
    }
  }
  rows.push(
    [`${kind}: proxy GET p50 (ms)`, pct(viaProxy, 50), pct(direct, 50)],
    [`${kind}: proxy GET p95 (ms)`, pct(viaProxy, 95), pct(direct, 95)],
    [`${kind}: api_call GET p50 (ms)`, pct(viaTool, 50), pct(direct, 50)],
    [`${kind}: api_call GET p95 (ms)`, pct(viaTool, 95), pct(direct, 95)],
  );
}

printTable(rows, 'direct', 2);
console.log('');
for (const [name, ours, base] of rows.filter(([name]) => name.includes('p50')))
  console.log(`${name.replace(' (ms)', '')} added: ${(ours - base).toFixed(2)} ms`);
console.log(
  '\nproxy = /api/credential-proxy/proxy in the API process (auth, session, connection, egress check, injection, redaction); ' +
    'api_call = the sidecar tool in this process (connection read and decrypted, checks, injection, redaction); direct = kept-alive ' +
    'undici GET to the same target',
);
writeResult('credential-proxy', { when: new Date().toISOString(), samples: { calls: CALLS }, results: resultsOf(rows, 'direct', 2) });

await dispatcher.close();
await knex.destroy();
await service.stop();
await new Promise((r) => plain.close(r));
tls.closeAllConnections();
await new Promise((r) => tls.close(r));
await cert.stop();
await mochaGlobalTeardown();
process.exit(0);
