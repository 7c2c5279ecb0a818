// Tenant text that becomes a regular expression (issue 28, hole 2) on the real stack: schema
// `pattern` and `patternProperties`, the `url` format and `authorized_uris` wildcards meet
// hostile input while /api/health is polled from another thread; patterns the linear-time
// engine cannot run are refused where the schema enters.
import { expect } from 'chai';
import { uniqueScope, zip } from '../fixtures/packages/build.ts';
import { type Client, newKey, newOrg, type Res, type TestApi } from '../support/api.ts';
import { type Probe, whileProbingHealth } from '../support/health-probe.ts';
import { type FakeModel, toolCall } from '../support/fake-model.ts';
import { agentManifest, importAgent, uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { type RunServices, startRunServices } from '../support/run-services.ts';

/** The pattern and input: exponential for a backtracking engine (minutes on V8). */
const EVIL = '^(a+)+$';
const HOSTILE = `${'a'.repeat(31)}!`;
/** An answer slower than this means the request was stuck behind the hostile match. */
const PROMPT_MS = 10_000;
/** Hostile requests repeat for this long, so that health probes run while they are served. */
const HOSTILE_FOR = { repeatForMs: 1500 };

const CODE_SCHEMA = { type: 'object', properties: { code: { type: 'string', pattern: EVIL }, site: { type: 'string', format: 'url' } } };
const OUTPUT_SCHEMA = { type: 'object', required: ['code'], properties: { code: { type: 'string', pattern: EVIL } } };

function expectHealthy(probes: Probe[]) {
  expect(probes.length, 'health probes').to.be.greaterThan(1);
  for (const p of probes) expect(p.status, p.error).to.equal(200);
  const slowest = Math.max(...probes.map((p) => p.ms));
  expect(slowest, `slowest /api/health answer in ms, of ${probes.length}`).to.be.below(1000);
}

async function timed(fn: () => Promise<Res>): Promise<Res> {
  const t0 = performance.now();
  const res = await fn();
  expect(performance.now() - t0, 'ms to answer').to.be.below(PROMPT_MS);
  return res;
}

describe('hostile patterns', function () {
  this.timeout(600_000);
  let services: RunServices;
  let api: TestApi;
  let model: FakeModel;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    services = await startRunServices({ output: { code: 'aaa' } });
    ({ api, model } = services);
    org = await newOrg(api, 'hostile');
    const created = await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    expect(created.status, created.text).to.equal(201);
    await importAgent(org.client, { name: '@hostile/agent', input: CODE_SCHEMA, output: OUTPUT_SCHEMA });
  });
  after(async () => {
    await services?.stop();
  });

  const launch = (input: Record<string, unknown>, client: Client = org.client) => client.post('/api/agents/@hostile/agent/run', { input });
  /** The run once it has ended. */
  const finished = async (id: string) => {
    for (;;) {
      const run = await org.client.get(`/api/runs/${id}?wait=30`);
      if (!['pending', 'running'].includes(run.body.status)) return run.body;
    }
  };
  /** A fresh API key: launches are limited per identity (20 a minute), hostile ones repeat. */
  const freshClient = async () => (await newKey(api, org.client, { name: 'hostile launcher' })).client;

  describe('linear-time matching', () => {
    it('answers /api/health under 1 s while an input pattern meets a hostile input, and answers the launch 400 promptly', async () => {
      const { probes } = await whileProbingHealth(
        api.url,
        async () => {
          const client = await freshClient();
          for (let i = 0; i < 3; i++) {
            const res = await timed(() => launch({ code: HOSTILE }, client));
            expectProblem(res, 400, 'validation_failed');
            expect(res.body.errors[0]).to.include({ field: 'code', code: 'invalid_format' });
          }
        },
        HOSTILE_FOR,
      );
      expectHealthy(probes);
      // The same pattern still accepts what it describes.
      const ok = await launch({ code: 'aaaa', site: 'https://example.com/path?q=1' });
      expect(ok.status, ok.text).to.equal(201);
    });

    it('matches patternProperties keys in linear time too (inline run)', async () => {
      const schema = { type: 'object', additionalProperties: false, patternProperties: { [EVIL]: { type: 'string' } } };
      const manifest = agentManifest({ name: `${uniqueScope('hp')}/inline`, input: schema });
      const { probes } = await whileProbingHealth(
        api.url,
        async () => {
          for (const route of ['/api/runs/inline', '/api/runs/inline/validate']) {
            const res = await timed(() => org.client.post(route, { manifest, prompt: 'p', input: { [HOSTILE]: 'x' } }));
            expectProblem(res, 400, 'validation_failed');
            expect(res.body.errors[0]).to.include({ field: HOSTILE, code: 'unknown_field' });
          }
        },
        HOSTILE_FOR,
      );
      expectHealthy(probes);
      const ok = await org.client.post('/api/runs/inline/validate', { manifest, prompt: 'p', input: { aaa: 'x' } });
      expect(ok.status, ok.text).to.equal(200);
    });

    it("checks the `url` format in linear time (ajv-formats' own expression is quadratic)", async () => {
      const { probes } = await whileProbingHealth(
        api.url,
        async () => {
          const client = await freshClient();
          const res = await timed(() => launch({ site: `http://${':'.repeat(100_000)}!` }, client));
          expectProblem(res, 400, 'validation_failed');
          expect(res.body.errors[0]).to.include({ field: 'site', code: 'invalid_format' });
        },
        HOSTILE_FOR,
      );
      expectHealthy(probes);
    });

    it('refuses an input too costly to check against large patterns, naming the field', async () => {
      const schema = { type: 'object', properties: { text: { type: 'string', pattern: 'a[ab]{999}c' } } };
      const manifest = agentManifest({ name: `${uniqueScope('hp')}/costly`, input: schema });
      const { probes } = await whileProbingHealth(
        api.url,
        async () => {
          const res = await timed(() => org.client.post('/api/runs/inline/validate', { manifest, prompt: 'p', input: { text: 'ab'.repeat(100_000) } }));
          expectProblem(res, 400, 'validation_failed');
          expect(res.body.errors[0]).to.include({ field: 'text', code: 'too_costly' });
        },
        HOSTILE_FOR,
      );
      expectHealthy(probes);
      const ok = await org.client.post('/api/runs/inline/validate', { manifest, prompt: 'p', input: { text: `a${'b'.repeat(999)}c` } });
      expect(ok.status, ok.text).to.equal(200);
    });

    it("judges an agent's output against a hostile output pattern in the worker without stalling anyone", async () => {
      // Runs repeat (each its own scripted answer, from a fresh key within the launch limit) so
      // that probes overlap the judging however quick one run is.
      let n = 0;
      const { result: done, probes } = await whileProbingHealth(
        api.url,
        async () => {
          const marker = `hostile-output-${n++}`;
          model.script(marker, [() => toolCall('output', { code: HOSTILE })]);
          const res = await launch({ code: 'aaa', marker }, await freshClient());
          expect(res.status, res.text).to.equal(201);
          return finished(res.body.id);
        },
        HOSTILE_FOR,
      );
      expect(done.status).to.equal('failed');
      expect(done.error).to.contain('does not match the output schema').and.contain('code');
      expectHealthy(probes);
    });

    it('matches authorized_uris wildcards in linear time (credential proxy)', async () => {
      const manifest = {
        name: '@hostile/api',
        version: '1.0.0',
        type: 'integration',
        schema_version: '0.3',
        display_name: 'Hostile target',
        description: 'test integration',
        auths: {
          main: {
            type: 'custom',
            credentials: { schema: { type: 'object', properties: { token: { type: 'string' } } } },
            // Four `**` make a backtracking engine try every way to place them: O(n^4).
            authorized_uris: ['https://api.example.com/**a**a**a**a**b'],
            delivery: { http: { in: 'header', name: 'Authorization' } },
          },
        },
      };
      const imported = await uploadPackage(org.client, await zip({ 'manifest.json': JSON.stringify(manifest) }));
      expect(imported.status, imported.text).to.equal(201);
      const key = await newKey(api, org.client, { name: 'proxy caller' });
      const session = await key.client.post('/api/credential-proxy/sessions', {});
      expect(session.status, session.text).to.equal(201);
      const { probes } = await whileProbingHealth(
        api.url,
        async () => {
          const res = await timed(() =>
            key.client.request('GET', '/api/credential-proxy/proxy', {
              headers: { 'X-Integration-Id': '@hostile/api', 'X-Target': `https://api.example.com/${'a'.repeat(200)}`, 'X-Session-Id': session.body.id },
            }),
          );
          expectProblem(res, 403, 'unauthorized_target');
        },
        HOSTILE_FOR,
      );
      expectHealthy(probes);
    });
  });

  describe('patterns the linear-time engine cannot run are refused where the schema enters', () => {
    const refusal = (res: Res, field: string, why: RegExp) => {
      expectProblem(res, 400, 'validation_failed');
      const error = res.body.errors.find((e: any) => e.field === field);
      expect(error, JSON.stringify(res.body.errors)).to.include({ code: 'unsupported_pattern' });
      expect(error.message).to.match(why);
      expect(res.body.detail).to.equal(res.body.errors[0].message);
    };

    it('package import: input and output schema patterns, patternProperties keys, named in errors[]', async () => {
      const manifest = agentManifest({
        name: '@hostile/refused',
        input: { type: 'object', properties: { code: { type: 'string', pattern: '^(a)\\1$' } }, patternProperties: { '(?<=a)b': {} } },
        output: { type: 'object', properties: { user: { type: 'array', items: { type: 'string', pattern: '^(?!admin)' } } } },
      });
      const res = await uploadPackage(org.client, await zip({ 'manifest.json': JSON.stringify(manifest), 'prompt.md': 'p' }));
      refusal(res, 'manifest.input.schema.properties.code.pattern', /backreference/);
      refusal(res, 'manifest.input.schema.patternProperties.(?<=a)b', /lookbehind/);
      refusal(res, 'manifest.output.schema.properties.user.items.pattern', /lookahead/);
      expect((await org.client.get('/api/agents/@hostile/refused')).status).to.equal(404);
    });

    it('inline runs and their validation: a pattern too large to compile cheaply', async () => {
      const manifest = agentManifest({
        name: `${uniqueScope('hp')}/large`,
        input: { type: 'object', properties: { x: { type: 'string', pattern: 'a{1000}'.repeat(40) } } },
      });
      for (const route of ['/api/runs/inline', '/api/runs/inline/validate']) {
        refusal(await org.client.post(route, { manifest, prompt: 'p', input: {} }), 'manifest.input.schema.properties.x.pattern', /too large/);
      }
    });

    it('a schema stored before patterns were checked: the launch answers 400 naming it, the run fails saying why', async () => {
      /** Imports `name`, then rewrites one pattern of its published manifest as older data may hold it. */
      const legacy = async (name: string, path: string[], pattern: string) => {
        await importAgent(org.client, { name, input: CODE_SCHEMA, output: OUTPUT_SCHEMA });
        const [scope, short] = name.split('/');
        await api.knex.raw(
          'update package_versions set manifest = jsonb_set(manifest, ?::text[], to_jsonb(?::text)) where package_id = (select id from ' +
            'packages where scope = ? and name = ?)',
          [`{${path.join(',')}}`, pattern, scope, short],
        );
      };
      await legacy('@hostile/legacy-input', ['input', 'schema', 'properties', 'code', 'pattern'], '^(a)\\1$');
      const refused = await org.client.post('/api/agents/@hostile/legacy-input/run', { input: { code: 'aa' } });
      expectProblem(refused, 400, 'validation_failed');
      expect(refused.body.errors[0]).to.include({ field: 'schema.properties.code.pattern', code: 'unsupported_pattern' });
      expect(refused.body.detail).to.match(/backreference/);

      await legacy('@hostile/legacy-output', ['output', 'schema', 'properties', 'code', 'pattern'], '^(?=a)');
      const launched = await org.client.post('/api/agents/@hostile/legacy-output/run', { input: { code: 'aaa' } });
      expect(launched.status, launched.text).to.equal(201);
      const done = await finished(launched.body.id);
      expect(done.status).to.equal('failed');
      expect(done.error).to.match(/^The output schema cannot be used: schema\.properties\.code\.pattern cannot be used: a lookahead/);
    });

    it("an integration's credentials schema", async () => {
      const manifest = {
        name: '@hostile/creds',
        version: '1.0.0',
        type: 'integration',
        schema_version: '0.3',
        display_name: 'Creds',
        description: 'test integration',
        auths: {
          main: {
            type: 'custom',
            credentials: { schema: { type: 'object', properties: { token: { type: 'string', pattern: '(?<t>x)\\k<t>' } } } },
            authorized_uris: ['https://api.example.com/**'],
          },
        },
      };
      const res = await uploadPackage(org.client, await zip({ 'manifest.json': JSON.stringify(manifest) }));
      refusal(res, 'manifest.auths.main.credentials.schema.properties.token.pattern', /backreference/);
    });
  });
});
