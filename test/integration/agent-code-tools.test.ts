// Issue 31, DESIGN.md 9: an agent that lists `bash` gets a shell in its sandbox and the file tools
// over its whole /workspace, on the real stack with a scripted model. A command's output reaches
// the model and each command is a run log line of kind `command`; edit_file changes exactly one
// occurrence; paths that leave the workspace are refused; what the agent leaves in output/ is
// kept, confined; the disk ceiling holds over the whole workspace, output/ included.
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { newOrg } from '../support/api.ts';
import { lastToolResult, type RecordedRequest, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { addFakeModel, type ModelServices, startModelServices } from '../support/run-services.ts';

const INPUT = { type: 'object', properties: { marker: { type: 'string' } } };
const DISK_MB = 16;

describe('agents that run code: bash and the workspace tools (issue 31)', function () {
  this.timeout(120_000);
  let services: ModelServices;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    // Warm sandboxes (the default pool) serve these runs: their folders have the code layout.
    services = await startModelServices({ workerEnv: { PLATFORM_RUN_LIMITS: JSON.stringify({ agent_disk_ceiling_mb: DISK_MB }) } });
    org = await newOrg(services.api, 'agentcode');
    await addFakeModel(org.client, services.model);
    await importAgent(org.client, { name: '@code/shell', input: INPUT, runtimeTools: ['output', 'bash'], timeout: 120 });
  });
  after(async () => {
    await services?.stop();
  });

  /** Runs the agent with a fresh marker scripted with `steps`; the finished run, its logs and the model's requests. */
  async function run(steps: Array<(req: RecordedRequest) => unknown>) {
    const marker = `code-${randomBytes(4).toString('hex')}`;
    const seen: RecordedRequest[] = [];
    services.model.script(
      marker,
      steps.map((step) => (req: RecordedRequest) => {
        seen.push(req);
        return step(req);
      }),
    );
    const res = await org.client.post('/api/agents/@code/shell/run', { input: { marker } });
    expect(res.status, res.text).to.equal(201);
    const done = await org.client.get(`/api/runs/${res.body.id}?wait=60`);
    const logs = await org.client.get(`/api/runs/${res.body.id}/logs`);
    return { run: done.body, logs: logs.body.data as any[], seen };
  }

  it("hands a command's output to the model, and logs each command as kind `command`", async () => {
    const results: any[] = [];
    const keep = (req: RecordedRequest) => results.push(JSON.parse(lastToolResult(req)));
    const {
      run: done,
      logs,
      seen,
    } = await run([
      () => toolCall('bash', { command: 'pwd; command -v api-call; /opt/node/node -p 6*7; echo "PATH=$PATH"; echo oops >&2; exit 3' }),
      (req) => {
        keep(req);
        return toolCall('bash', { command: 'sleep 30 & sleep 30; echo never', timeout_seconds: 1 });
      },
      (req) => {
        keep(req);
        return toolCall('bash', { command: 'head -c 100000 /dev/zero | tr "\\0" a; echo; echo END' });
      },
      (req) => {
        keep(req);
        return toolCall('output', { done: true });
      },
    ]);
    expect(done.status, done.error).to.equal('success');

    // The tools offered, and the workspace as the prompt describes it.
    const offered = seen[0].body.tools.map((t: any) => t.function.name);
    expect(offered).to.include.members(['output', 'bash', 'list_files', 'read_file', 'write_file', 'edit_file']);
    const system = seen[0].body.messages[0].content as string;
    expect(system).to.include('`bash` runs commands in /workspace').and.include('/workspace/output');

    const [first, timedOut, long] = results;
    expect(first.exit_code).to.equal(3);
    expect(first.stdout).to.equal('/workspace\n/runtime/bin/api-call\n42\nPATH=/usr/bin:/bin:/runtime/bin\n');
    expect(first.stderr).to.equal('oops\n');
    expect(first.truncated).to.equal(false);
    expect(first.duration_ms).to.be.a('number');
    // Killed with its group at the timeout: no exit code, and the reason said.
    expect(timedOut.exit_code).to.equal(null);
    expect(timedOut.stdout).to.equal('');
    expect(timedOut.stderr).to.match(/killed: the command ran past its timeout of 1 s/);
    expect(timedOut.duration_ms).to.be.within(900, 10_000);
    // Each stream cut to its last 64 KiB.
    expect(long.truncated).to.equal(true);
    expect(Buffer.byteLength(long.stdout)).to.equal(64 * 1024);
    expect(long.stdout.endsWith('a\nEND\n')).to.equal(true);
    expect(long.exit_code).to.equal(0);

    // The log: one `command` line per command, as progress with data.tool 'bash'.
    const commands = logs.filter((l) => l.kind === 'command');
    expect(commands).to.have.length(3);
    for (const c of commands) {
      expect(c).to.include({ type: 'progress', event: 'progress' });
      expect(c.data.tool).to.equal('bash');
      expect(c.data.duration_ms).to.be.a('number');
    }
    expect(commands.map((c) => [c.level, c.data.exit_code])).to.deep.equal([
      ['warn', 3],
      ['warn', null],
      ['info', 0],
    ]);
    expect(commands[0].message).to.match(/^\$ pwd; command -v api-call; .* -> exit 3 in \d+ ms$/);
    expect(commands[0].data.command).to.include('echo oops >&2; exit 3');
    expect(commands[1].message).to.match(/-> killed in \d+ ms$/);
  });

  it('edit_file replaces exactly one occurrence and refuses none or several; the file tools reach the whole workspace', async () => {
    const results: string[] = [];
    const keep = (next: unknown) => (req: RecordedRequest) => {
      results.push(lastToolResult(req));
      return next;
    };
    const { run: done } = await run([
      () => toolCall('write_file', { path: 'notes/a.txt', content: 'x one x two' }),
      keep(toolCall('edit_file', { path: 'notes/a.txt', old: 'x', new: 'y' })),
      keep(toolCall('edit_file', { path: 'notes/a.txt', old: 'zzz', new: 'y' })),
      keep(toolCall('edit_file', { path: '/workspace/notes/a.txt', old: 'one', new: '1' })),
      keep(toolCall('read_file', { path: 'notes/a.txt' })),
      keep(toolCall('bash', { command: 'cat notes/a.txt > output/copy.txt' })),
      keep(toolCall('list_files', {})),
      keep(toolCall('output', { done: true })),
    ]);
    expect(done.status, done.error).to.equal('success');
    const [written, twice, none, once, read, , listed] = results;
    expect(written).to.equal('Wrote 11 bytes to /workspace/notes/a.txt');
    expect(twice).to.match(/^edit_file: `old` occurs more than once in \/workspace\/notes\/a\.txt/);
    expect(none).to.match(/^edit_file: `old` was not found in \/workspace\/notes\/a\.txt/);
    expect(once).to.equal('Replaced 1 occurrence in /workspace/notes/a.txt');
    expect(read).to.equal('x 1 x two');
    expect(listed).to.include('/workspace/notes/a.txt (9 bytes)').and.include('/workspace/output/copy.txt (9 bytes)').and.include('/workspace/input/');
    // What it left in output/ is a file of the run.
    const outputs = done.files.filter((f: any) => f.origin === 'output');
    expect(outputs.map((f: any) => [f.name, f.size])).to.deep.equal([['copy.txt', 9]]);
  });

  it('refuses a path that leaves the workspace by `..` or through a link, and writes to input/ or .skills/', async () => {
    const results: string[] = [];
    const keep = (next: unknown) => (req: RecordedRequest) => {
      results.push(lastToolResult(req));
      return next;
    };
    const { run: done } = await run([
      () => toolCall('bash', { command: 'ln -s /etc/passwd pw && ln -s /etc etc-link && ln -s /runtime rt && ln -s notes/inside.txt ok-link && mkdir notes' }),
      keep(toolCall('read_file', { path: '../etc/passwd' })),
      keep(toolCall('read_file', { path: 'pw' })),
      keep(toolCall('read_file', { path: 'rt/main.mjs' })),
      keep(toolCall('write_file', { path: 'etc-link/evil', content: 'no' })),
      keep(toolCall('write_file', { path: '/workspace/../../tmp/evil', content: 'no' })),
      keep(toolCall('write_file', { path: 'input/evil', content: 'no' })),
      keep(toolCall('write_file', { path: '.skills/evil', content: 'no' })),
      keep(toolCall('write_file', { path: 'ok-link', content: 'through a link that stays inside' })),
      keep(toolCall('read_file', { path: 'notes/inside.txt' })),
      keep(toolCall('output', { done: true })),
    ]);
    expect(done.status, done.error).to.equal('success');
    const [, dotdot, link, runtime, writeLink, writeDotdot, input, skills, okLink, inside] = results;
    expect(dotdot).to.equal('read_file: ../etc/passwd leaves /workspace');
    expect(link).to.equal('read_file: /workspace/pw leads outside /workspace (through a link)');
    expect(runtime).to.equal('read_file: /workspace/rt/main.mjs leads outside /workspace (through a link)');
    expect(writeLink).to.equal('write_file: /workspace/etc-link/evil leads outside /workspace (through a link)');
    expect(writeDotdot).to.equal('write_file: /workspace/../../tmp/evil is outside /workspace (paths are relative to /workspace)');
    expect(input).to.equal('write_file: /workspace/input/evil is read-only (input/ and .skills/ are)');
    expect(skills).to.equal('write_file: /workspace/.skills/evil is read-only (input/ and .skills/ are)');
    expect(okLink).to.match(/^Wrote 32 bytes to \/workspace\/ok-link$/);
    expect(inside).to.equal('through a link that stays inside');
    expect(fs.existsSync('/etc/evil')).to.equal(false);
  });

  it('holds the disk ceiling over everything the agent writes, output/ included', async () => {
    const results: any[] = [];
    const { run: done } = await run([
      () => toolCall('bash', { command: `dd if=/dev/zero of=output/fill bs=1M count=${DISK_MB * 4} 2>&1; df -m /workspace | tail -1` }),
      (req) => {
        results.push(JSON.parse(lastToolResult(req)));
        return toolCall('bash', { command: 'rm output/fill; dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1' });
      },
      (req) => {
        results.push(JSON.parse(lastToolResult(req)));
        return toolCall('output', { done: true });
      },
    ]);
    expect(done.status, done.error).to.equal('success');
    expect(results[0].stdout).to.include('No space left on device');
    expect(results[0].stdout).to.match(new RegExp(`tmpfs +${DISK_MB} `));
    // /tmp is the workspace's: the same ceiling.
    expect(results[1].stdout).to.include('No space left on device');
  });

  it('keeps nothing when the agent replaced output/ by a link to a host folder', async () => {
    const { run: done, logs } = await run([
      () => toolCall('bash', { command: 'rm -rf output && ln -s /etc output' }),
      () => toolCall('output', { done: true }),
    ]);
    expect(done.status, done.error).to.equal('success');
    expect(done.files.filter((f: any) => f.origin === 'output')).to.deep.equal([]);
    expect(logs.map((l) => `${l.kind}:${l.message}`)).to.include('files:Not kept: /workspace/output is not a folder (the agent removed or replaced it)');
  });
});
