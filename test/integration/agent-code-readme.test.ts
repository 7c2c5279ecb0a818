// Issue 31: README.md's worked example ("A worked example: an agent that runs a skill's script")
// runs as written. Its blocks (`title="..."`) are read from the README: the skill with its Python
// script, the agent, its prompt and the input file are written to a folder, the launch block runs
// in bash with curl against a real API and worker (through the test client instead when curl, zip
// or jq is missing), the model scripted to do what the README says a model does; the result must
// be the README's `result` block.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../shared/stack/ports.ts';
import { zip } from '../fixtures/packages/build.ts';
import { Client, newKey, newOrg } from '../support/api.ts';
import { lastToolResult, toolCall } from '../support/fake-model.ts';
import { uploadPackage } from '../support/packages.ts';
import { addFakeModel, type RunServices, startRunServices } from '../support/run-services.ts';

const README = path.resolve(import.meta.dirname, '..', '..', 'README.md');
const HAS_PYTHON = fs.existsSync('/usr/bin/python3');
const SHELL_TOOLS = spawnSync('sh', ['-c', 'command -v curl && command -v zip && command -v jq'], { stdio: 'ignore' }).status === 0;

/** The README's blocks that carry a `title="..."`, by title. */
function titledBlocks(): Record<string, string> {
  const text = fs.readFileSync(README, 'utf8');
  const blocks: Record<string, string> = {};
  for (const m of text.matchAll(/^```\w+ title="([^"]+)"\n([\s\S]*?)^```$/gm)) blocks[m[1]] = m[2];
  return blocks;
}

/** Runs `script` in bash in `cwd`; its stdout, or the failure with its stderr. */
function bash(script: string, cwd: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`the launch block exited ${code}: ${err}`))));
  });
}

describe("README's worked example: an agent that runs a skill's script (issue 31)", function () {
  this.timeout(120_000);
  let services: RunServices;
  const dirs: string[] = [];
  before(async function () {
    if (!HAS_PYTHON) this.skip(); // the script is Python: the sandbox mounts the host's /usr
    // Upload URLs are made from PUBLIC_URL: the API's own, as a deployment's would be.
    const port = await freePort();
    services = await startRunServices({ output: {}, apiEnv: { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` } });
  });
  after(async () => {
    await services?.stop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('imports the skill and the agent, runs the script on the input file, and ends with the result the README shows', async () => {
    const blocks = titledBlocks();
    const files = Object.keys(blocks).filter((t) => t.includes('/') || t.endsWith('.csv'));
    expect(files.sort()).to.deep.equal([
      'csv-report/manifest.json',
      'csv-report/prompt.md',
      'csv-stats/SKILL.md',
      'csv-stats/manifest.json',
      'csv-stats/scripts/stats.py',
      'sales.csv',
    ]);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-example-'));
    dirs.push(dir);
    for (const name of files) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), blocks[name]);
    }

    const org = await newOrg(services.api, 'readme');
    await addFakeModel(org.client, services.model);
    const key = await newKey(services.api, org.client);

    // What a model does with that prompt: the command SKILL.md gives, then the printed JSON as the output.
    const seen: string[] = [];
    let command: any;
    services.model.script('sales.csv', [
      (req) => {
        seen.push(req.body.messages[0].content);
        const input = JSON.parse(req.body.messages.find((m: any) => m.role === 'user').content);
        return toolCall('bash', { command: `python3 /workspace/.skills/@acme/csv-stats/scripts/stats.py ${input.data} /workspace/output/stats.json` });
      },
      (req) => {
        command = JSON.parse(lastToolResult(req));
        return toolCall('output', JSON.parse(command.stdout));
      },
    ]);

    let result: unknown;
    if (SHELL_TOOLS) {
      result = JSON.parse(await bash(blocks.launch, dir, { URL: services.api.url, KEY: key.key }));
    } else {
      // The launch block's steps through the test client.
      const folder = async (name: string) => {
        const entries: Record<string, string> = {};
        for (const f of files.filter((x) => x.startsWith(`${name}/`))) entries[f.slice(name.length + 1)] = blocks[f];
        const res = await uploadPackage(key.client, await zip(entries));
        expect(res.status, res.text).to.equal(201);
      };
      await folder('csv-stats');
      await folder('csv-report');
      const csv = Buffer.from(blocks['sales.csv']);
      const upload = await key.client.post('/api/uploads', { name: 'sales.csv', contentType: 'text/csv', size: csv.length });
      const url = new URL(upload.body.uploadUrl);
      expect((await new Client(services.api.url).request('PUT', url.pathname + url.search, { raw: csv })).status).to.equal(200);
      const run = await key.client.post('/api/agents/@acme/csv-report/run', { input: { data: upload.body.id } });
      expect(run.status, run.text).to.equal(201);
      const done = (await key.client.get(`/api/runs/${run.body.id}?wait=true`)).body;
      result = { status: done.status, output: done.result?.output, files: done.files.map((f: any) => ({ origin: f.origin, name: f.name })) };
    }

    expect(command.exit_code, command.stderr).to.equal(0);
    expect(seen[0], 'the prompt names the skill and where its files are').to.include('## CSV stats').and.include('/workspace/.skills/@acme/csv-stats/');
    expect(result).to.deep.equal(JSON.parse(blocks.result));
  });
});
