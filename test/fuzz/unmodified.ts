// The contract under an unmodified fuzzer (issue 30): a fresh `npm start` (embedded defaults, in a
// data directory of its own, on free ports), its first owner and an API key of theirs, and the
// schemathesis command that must come out clean with no hook, no setting file and no accepted
// refusal. Prints the command and keeps the stack up until Ctrl-C; with `--run` it runs the
// command itself (SCHEMATHESIS names the binary, default `schemathesis` on the PATH), then stops
// the stack and exits with schemathesis's code. The narrowed profile the suite runs is
// test/integration/fuzz.test.ts; both are described in test/integration/fuzz/README.md.
//
//   node_modules/.bin/node test/fuzz/unmodified.ts [--run]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { embeddedStartEnv } from '../support/embedded-start.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fuzz-stack-'));
const bootstrapToken = randomBytes(16).toString('hex');
// Embedded defaults only: nothing external inherited from the caller's shell.
const { env, port } = await embeddedStartEnv(dataDir, { port: 3000, extra: { BOOTSTRAP_TOKEN: bootstrapToken }, drop: ['MODULES'] });

const stack = spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
let output = '';
stack.stdout!.on('data', (d: Buffer) => {
  output += d.toString();
  process.stderr.write(d);
});
const exited = new Promise<void>((resolve) => stack.once('exit', () => resolve()));

async function stop(code: number): Promise<never> {
  if (stack.exitCode === null) {
    process.kill(-stack.pid!, 'SIGTERM'); // start.ts stops the API and worker, then Temporal, then Postgres
    await exited;
  }
  // As root the Postgres data lives beside the shared temporary folders, linked from DATA_DIR.
  const pg = path.join(dataDir, 'pg');
  try {
    if (fs.lstatSync(pg).isSymbolicLink()) fs.rmSync(fs.realpathSync(pg), { recursive: true, force: true });
  } catch {}
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(code);
}
process.once('SIGINT', () => void stop(130));
process.once('SIGTERM', () => void stop(143));

const deadline = Date.now() + 300_000;
while (!output.includes('Ready.')) {
  if (stack.exitCode !== null || Date.now() > deadline) {
    console.error('[fuzz] npm start did not get ready');
    await stop(1);
  }
  await new Promise((r) => setTimeout(r, 200));
}

const api = `http://127.0.0.1:${port}`;
async function post(route: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(api + route, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const json = (await res.json()) as Record<string, any>;
  if (!res.ok) throw new Error(`${route}: ${res.status} ${JSON.stringify(json)}`);
  return {
    json,
    cookie: res.headers
      .getSetCookie()
      .find((c) => c.startsWith('svc.session_token='))
      ?.split(';')[0],
  };
}
// The first owner (bootstrap: an organization with its default space), then a key of theirs.
const owner = await post('/api/auth/bootstrap/redeem', {
  token: bootstrapToken,
  email: 'fuzz-owner@example.com',
  password: 'fuzz-owner-password',
  name: 'Fuzz Owner',
});
const org = owner.json.organization as { id: string; defaultSpaceId: string };
const key = await post('/api/api-keys', { name: 'fuzz' }, { cookie: owner.cookie!, 'X-Org-Id': org.id, 'X-Space-Id': org.defaultSpaceId });

const schemathesis = process.env.SCHEMATHESIS || 'schemathesis';
const args = [
  'run',
  `${api}/api/openapi.json`,
  '--checks',
  'all',
  '--max-examples',
  '20',
  '--seed',
  '1',
  '--header',
  `Authorization: Bearer ${key.json.key}`,
  '--header',
  `X-Org-Id: ${org.id}`,
  '--header',
  `X-Space-Id: ${org.defaultSpaceId}`,
];
const quoted = [schemathesis, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a}'`)).join(' ');
console.log(`\n[fuzz] the unmodified command (run it from an empty folder: schemathesis writes .hypothesis/ there):\n\n  ${quoted}\n`);

if (!process.argv.includes('--run')) {
  console.log('[fuzz] the stack runs until Ctrl-C');
  await exited;
  await stop(1);
}
const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'fuzz-run-'));
const fuzz = spawn(schemathesis, args, { cwd, stdio: 'inherit' });
const code = await new Promise<number>((resolve) => fuzz.once('exit', (c) => resolve(c ?? 1)));
fs.rmSync(cwd, { recursive: true, force: true });
await stop(code);
