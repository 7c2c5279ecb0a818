// Issue 14: a schema-driven fuzzer (schemathesis, from PyPI, all of its checks) against
// /api/openapi.json with an owner's API key. Installed project-locally into .tools/schemathesis
// on first use, like the Temporal CLIs (shared/stack/ensure-installed.mjs). This is the narrowed
// profile; the unmodified one (issue 30) is test/fuzz/unmodified.ts, both in fuzz/README.md.
//
// Left out: the Server-Sent Events streams (/api/realtime/*: they never end) and the sink
// routes (`sinkSecret`, a per-run secret the fuzzer does not hold). The settings in fuzz/ are
// narrow, each explained there and in docs/decisions.md ("Contract fuzzing"):
// - fuzz/hooks.py: schemathesis 4.32.5's coverage phase sends an optional header whose pattern
//   needs a character outside A-Z a-z 0-9 (`Service-User` `^eu_`, `X-Space-Id` `^spc_...`) with
//   a negative value (`0`) in cases labelled positive; the hook leaves such a header out of them.
// - X-Org-Id is the key's organization (SPEC 5.2: ignored with an API key, whatever it holds).
// - GET /api/runs/{id} reads with `wait=1` (a wait holds the request up to 55 s; runs here
//   never finish); the API raises CREDENTIAL_PROXY_LIMITS.rate_per_min, which the fuzzer exceeds.
// - positive_data_acceptance also accepts, on the named operations only, refusals of
//   well-formed requests that only the server can judge: 400 unknown pagination cursor, 422
//   idempotency_conflict (a drawn Idempotency-Key reused with another body), 400 inline-run
//   manifest semantics and INLINE_RUN_LIMITS, 400 unresolvable model base URL or webhook URL, 400 cron
//   expression, 400 reset token unknown or used, 400 invalid_archive (import and import-bundle),
//   410 connect_link_gone, 400 on the OIDC protocol endpoints and pages (RFC 6749 / 8628 errors
//   for unknown clients, codes, tokens or interactions), 413 and 410 on uploads, 416 and 415 on
//   files, 400 a bulk run filter whose createdBefore is not after createdAfter.
// - not_a_server_error accepts 502 where the documented upstream is on the internet, which this
//   machine does not reach: OpenRouter's model list and GitHub imports.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { newKey, newOrg, startTestApi, type TestApi } from '../support/api.ts';

const SCHEMATHESIS = '4.32.5';
const root = path.resolve(import.meta.dirname, '..', '..');
const target = path.join(root, '.tools', 'schemathesis');
const bin = path.join(target, 'bin', 'schemathesis');
const settings = path.join(import.meta.dirname, 'fuzz');

function ensureSchemathesis(): void {
  if (fs.existsSync(bin)) return;
  const pip = ['pip3', 'pip'].find((p) => spawnSync(p, ['--version'], { stdio: 'ignore' }).status === 0);
  if (!pip) throw new Error('pip is needed to install schemathesis');
  const r = spawnSync(pip, ['install', '--quiet', '--disable-pip-version-check', '--target', target, `schemathesis==${SCHEMATHESIS}`], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`pip install schemathesis failed (exit ${r.status})`);
}

describe('Contract fuzzing (schemathesis, all checks)', function () {
  this.timeout(300_000);
  let api: TestApi;
  before(async () => {
    ensureSchemathesis();
    // The fuzzer sends the credential proxy far more than its 100 calls a minute per identity.
    api = await startTestApi({ CREDENTIAL_PROXY_LIMITS: JSON.stringify({ rate_per_min: 100_000 }) });
  });
  after(() => api?.close());

  it('finds no 5xx, no response outside its schema, no valid request refused, no 405 without Allow', async () => {
    const org = await newOrg(api, 'fuzz');
    const { key } = await newKey(api, org.client, { name: 'fuzz' });
    const args = [
      '--config-file',
      path.join(settings, 'schemathesis.toml'),
      'run',
      `${api.url}/api/openapi.json`,
      '--header',
      `Authorization: Bearer ${key}`,
      '--checks',
      'all',
      '--max-examples',
      '5',
      '--seed',
      '1',
      '--workers',
      '1',
      '--phases',
      'examples,coverage,fuzzing',
      '--exclude-path-regex',
      '^/api/realtime/|/sink',
      '--generation-database',
      'none',
      '--no-color',
    ];
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(bin, args, {
        env: { ...process.env, PYTHONPATH: target, SCHEMATHESIS_HOOKS: path.join(settings, 'hooks.py'), FUZZ_ORG_ID: org.orgId },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      child.on('exit', resolve);
    });
    expect(code).to.equal(0);
  });
});
