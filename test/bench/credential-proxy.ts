// Credential proxy: the latency it adds. p50 of sequential GETs through
// /api/credential-proxy/proxy (session check, connection lookup, decryption, egress check,
// injection, redaction) against direct undici GETs to the same local node:http target. API and
// worker run as processes of their own. Writes JSON under test/bench/results/.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { zip } from '../fixtures/packages/build.ts';
import { mochaGlobalSetup, mochaGlobalTeardown } from '../setup/global.ts';
import { newKey, newOrg } from '../support/api.ts';
import { uploadPackage } from '../support/packages.ts';
import { startServiceProcesses } from './processes.ts';
import { pct, printTable, type Row, resultsOf, say, writeResult } from './report.ts';

const CALLS = 300;
const WARMUP = 20;

say('starting the stack...');
await mochaGlobalSetup();
const target = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
const service = await startServiceProcesses({ CREDENTIAL_PROXY_LIMITS: JSON.stringify({ rate_per_min: 100000 }) });
const api = { url: service.apiUrl };

const org = await newOrg(api, 'bench');
const manifest = {
  name: '@bench/target',
  version: '1.0.0',
  type: 'integration',
  schema_version: '0.3',
  display_name: 'Bench target',
  description: 'bench integration',
  auths: {
    main: {
      type: 'custom',
      credentials: { schema: { type: 'object', required: ['token'], properties: { token: { type: 'string' } } } },
      authorized_uris: [`${targetUrl}/**`],
      delivery: { http: { in: 'header', name: 'Authorization', prefix: 'Bearer ' } },
    },
  },
};
const imported = await uploadPackage(org.client, await zip({ 'manifest.json': JSON.stringify(manifest) }));
if (imported.status !== 201) throw new Error(`import: ${imported.status} ${imported.text}`);
const conn = await org.client.post('/api/integrations/@bench/target/auths/main/connect/fields', { credentials: { token: 'bench-token-123456' } });
if (conn.status !== 201) throw new Error(`connect: ${conn.status} ${conn.text}`);
const { key, client } = await newKey(api, org.client, { name: 'bench proxy' });
const session = await client.post('/api/credential-proxy/sessions', {});
if (session.status !== 201) throw new Error(`session: ${session.status} ${session.text}`);

say(`${CALLS} proxied GETs and ${CALLS} direct GETs, one at a time...`);
const dispatcher = new Agent();
const proxied = { authorization: `Bearer ${key}`, 'X-Integration-Id': '@bench/target', 'X-Target': `${targetUrl}/v1/item`, 'X-Session-Id': session.body.id as string };
async function timed(url: string, headers: Record<string, string> = {}): Promise<number> {
  const t0 = performance.now();
  const res = await request(url, { headers, dispatcher });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
  return performance.now() - t0;
}
const viaProxy: number[] = [];
const direct: number[] = [];
for (let i = 0; i < CALLS + WARMUP; i++) {
  const p = await timed(`${api.url}/api/credential-proxy/proxy`, proxied);
  const d = await timed(`${targetUrl}/v1/item`);
  if (i >= WARMUP) {
    viaProxy.push(p);
    direct.push(d);
  }
}

const rows = [
  ['GET p50 (ms)', pct(viaProxy, 50), pct(direct, 50)],
  ['GET p95 (ms)', pct(viaProxy, 95), pct(direct, 95)],
] satisfies Row[];
printTable(rows, 'direct', 2);
console.log(`\nadded latency p50: ${(pct(viaProxy, 50) - pct(direct, 50)).toFixed(2)} ms`);
console.log('service = /api/credential-proxy/proxy (auth, session, connection, egress check, injection, redaction); direct = undici GET to the same target');
writeResult('credential-proxy', { when: new Date().toISOString(), samples: { calls: CALLS }, results: resultsOf(rows, 'direct', 2) });

await dispatcher.close();
await service.stop();
await new Promise((r) => target.close(r));
await mochaGlobalTeardown();
process.exit(0);
