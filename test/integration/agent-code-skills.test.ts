// Issue 31, DESIGN.md 9: skills as files. A skill archive keeps every file; an agent that runs
// code finds each of its skills read-only at /workspace/.skills/<scope>/<name>/, the prompt says
// where, and the skill's script (Python where the host has it, else shell) turns an input file
// into an output file the run keeps. Sandboxes start cold here (no warm pool): the other path.
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { zip } from '../fixtures/packages/build.ts';
import { Client, newOrg } from '../support/api.ts';
import { lastToolResult, type RecordedRequest, toolCall } from '../support/fake-model.ts';
import { importAgent, uploadPackage } from '../support/packages.ts';
import { addFakeModel, type ModelServices, startModelServices } from '../support/run-services.ts';

const PYTHON = fs.existsSync('/usr/bin/python3');
const SKILL = '@codeskill/csv-upper';
const SCRIPT = PYTHON ? 'scripts/upper.py' : 'scripts/upper.sh';
const INPUT = {
  type: 'object',
  required: ['marker', 'data'],
  properties: { marker: { type: 'string' }, data: { type: 'string', format: 'file' } },
};
const inputOf = (req: RecordedRequest) => JSON.parse(req.body.messages.find((m: any) => m.role === 'user').content);

describe('agents that run code: skills as files (issue 31)', function () {
  this.timeout(120_000);
  let services: ModelServices;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    services = await startModelServices({ workerEnv: { SANDBOX_WARM_POOL: '0' } });
    org = await newOrg(services.api, 'codeskills');
    await addFakeModel(org.client, services.model);
    const skill = await zip({
      'manifest.json': JSON.stringify({
        name: SKILL,
        version: '1.0.0',
        type: 'skill',
        schema_version: '0.3',
        display_name: 'CSV upper',
        description: 'Turns a CSV file to upper case.',
      }),
      'SKILL.md': `Run \`${PYTHON ? 'python3' : 'sh'} ${SCRIPT} <input> <output>\` from this folder.`,
      'scripts/upper.py':
        '#!/usr/bin/env python3\nimport sys\nwith open(sys.argv[1]) as src, open(sys.argv[2], "w") as dst:\n    for line in src:\n ' +
        '       dst.write(line.upper())\n',
      'scripts/upper.sh': '#!/bin/sh\ntr a-z A-Z < "$1" > "$2"\n',
      'references/format.md': 'Comma separated, one header line.\n',
    });
    const imported = await uploadPackage(org.client, skill);
    expect(imported.status, imported.text).to.equal(201);
    await importAgent(org.client, {
      name: '@codeskill/agent',
      input: INPUT,
      runtimeTools: ['output', 'bash'],
      dependencies: { skills: { [SKILL]: '^1.0.0' } },
      timeout: 120,
    });
  });
  after(async () => {
    await services?.stop();
  });

  async function upload(name: string, contentType: string, bytes: Buffer): Promise<string> {
    const res = await org.client.post('/api/uploads', { name, contentType, size: bytes.length });
    expect(res.status, res.text).to.equal(201);
    const u = new URL(res.body.uploadUrl);
    const put = await new Client(services.api.url).request('PUT', u.pathname + u.search, {
      raw: bytes,
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(put.status, put.text).to.equal(200);
    return res.body.id;
  }

  it('keeps every file of a skill archive', async () => {
    const res = await org.client.get(`/api/packages/${SKILL}/files`);
    expect(res.status, res.text).to.equal(200);
    const paths = (res.body.data ?? res.body).map((f: any) => f.path).sort();
    expect(paths).to.deep.equal(['SKILL.md', 'manifest.json', 'references/format.md', 'scripts/upper.py', 'scripts/upper.sh']);
  });

  it(
    'mounts each skill read-only at /workspace/.skills/<scope>/<name>/, names it in the prompt, and runs its script on an input ' +
      'file into a file the run keeps',
    async () => {
      const marker = `skill-${randomBytes(4).toString('hex')}`;
      const data = await upload('people.csv', 'text/csv', Buffer.from('name,city\nada,london\nalan,wilmslow\n'));
      const seen: RecordedRequest[] = [];
      const results: any[] = [];
      const dir = `/workspace/.skills/${SKILL}`;
      services.model.script(marker, [
        (req) => {
          seen.push(req);
          return toolCall('bash', { command: `cd ${dir} && ${PYTHON ? 'python3' : 'sh'} ${SCRIPT} ${inputOf(req).data} /workspace/output/people-upper.csv` });
        },
        (req) => {
          results.push(JSON.parse(lastToolResult(req)));
          return toolCall('bash', { command: `cd ${dir} && find . -type f | sort && stat -c '%A %n' scripts/upper.py references/format.md && touch SKILL.md` });
        },
        (req) => {
          results.push(JSON.parse(lastToolResult(req)));
          return toolCall('output', { done: true });
        },
      ]);
      const res = await org.client.post('/api/agents/@codeskill/agent/run', { input: { marker, data } });
      expect(res.status, res.text).to.equal(201);
      const done = (await org.client.get(`/api/runs/${res.body.id}?wait=60`)).body;
      expect(done.status, done.error).to.equal('success');

      // The prompt names the skill, its description and its folder.
      const system = seen[0].body.messages[0].content as string;
      expect(system).to.include('## CSV upper\nTurns a CSV file to upper case.').and.include(`Its files: ${dir}/`);
      expect(inputOf(seen[0]).data).to.equal('/workspace/input/data/people.csv');

      const [transform, listing] = results;
      expect(transform.exit_code, transform.stderr).to.equal(0);
      expect(listing.stdout).to.equal(
        './SKILL.md\n./manifest.json\n./references/format.md\n./scripts/upper.py\n./scripts/upper.sh\n-r-xr-xr-x scripts/upper.py\n-r--r--r-- ' +
          'references/format.md\n',
      );
      expect(listing.exit_code).to.not.equal(0);
      // Root's files (materialized by the worker) on a read-only mount: either refusal stops it.
      expect(listing.stderr).to.match(/touch: cannot touch 'SKILL.md': (Read-only file system|Permission denied)/);

      const kept = done.files.filter((f: any) => f.origin === 'output');
      expect(kept.map((f: any) => f.name)).to.deep.equal(['people-upper.csv']);
      const content = await org.client.get(`/api/files/${kept[0].id}/content`);
      expect(content.text).to.equal('NAME,CITY\nADA,LONDON\nALAN,WILMSLOW\n');
    },
  );
});
