// The agent runtime: runs inside the sandbox with no network, no database and no secrets. It
// holds the tool-calling loop and reaches the model and the tools only through the sidecar's
// unix socket. It imports nothing but Node built-ins, because only this folder is mounted, and
// the types of its protocol with the sidecar, which vanish when its types are stripped.
import fs from 'node:fs';
import path from 'node:path';
import type {
  ChatMessage,
  FileLimits,
  LocalBegin,
  LocalBeginAnswer,
  LocalEnd,
  ModelAnswer,
  ModelRequest,
  ReplyRequest,
  RunSpec,
  SidecarError,
  SidecarPaths,
  ToolRequest,
  ToolResult,
} from '../sidecar/protocol.ts';

// Not node:http: loading its client and compiling it on the first request was a third of the
// runtime's CPU in every sandbox (34 against 25 ms for a start and three calls, issue 18). The
// sidecar is ours, so each call is one HTTP/1.1 exchange on a connection of its own: the request
// with its length, `Connection: close`, and the answer read until the sidecar closes (its own
// answers state their length, never chunk it). `process.getBuiltinModule`, not an ES import,
// which would build the module's whole namespace.
const net = process.getBuiltinModule('node:net');

// The sidecar's paths (activities/sidecar/protocol.ts). A value the runtime cannot import: this
// copy is typed by the declaration there, so tsc refuses one that drifts from it.
const PATHS: SidecarPaths = {
  run: '/v1/run',
  model: '/v1/model',
  tools: '/v1/tools/',
  reply: '/v1/reply',
  localBegin: '/v1/local/begin',
  localEnd: '/v1/local/end',
  apiCall: '/v1/api-call',
};
/** An answer but 200 may say why (SidecarError); Node's own refusals say nothing. */
type Answer<T> = T & Partial<SidecarError>;

const socketPath = process.env.SIDECAR_SOCKET ?? '/sidecar/sidecar.sock';
const MAX_NUDGES = 2;

function call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(body === undefined ? '' : JSON.stringify(body));
    const head = `${method} ${path} HTTP/1.1\r\nHost: sidecar\r\nConnection: close\r\nContent-Type: \
application/json\r\nContent-Length: ${payload.length}\r\n\r\n`;
    const chunks: Buffer[] = [];
    const socket = net.connect(socketPath);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      try {
        resolve(parseAnswer<T>(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    });
    // Not end(): Node's HTTP server drops a request whose client half-closed before the answer.
    socket.write(Buffer.concat([Buffer.from(head, 'latin1'), payload]));
  });
}

/**
 * The status line, the headers up to the blank line, then the JSON body: of the stated length
 * (the sidecar's own answers), else the rest until the close (Node's answers to a request it
 * refused, e.g. 400, state none). An empty body reads as `{}`.
 */
function parseAnswer<T>(raw: Buffer): { status: number; body: T } {
  const headEnd = raw.indexOf('\r\n\r\n');
  const head = headEnd < 0 ? '' : raw.subarray(0, headEnd).toString('latin1');
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(head);
  if (!status || /\r\ntransfer-encoding:/i.test(head)) throw new Error('the sidecar closed the connection without a complete answer');
  const length = /\r\ncontent-length: *(\d+)/i.exec(head);
  const body = raw.subarray(headEnd + 4, length ? headEnd + 4 + Number(length[1]) : raw.length);
  if (length && body.length < Number(length[1])) throw new Error('the sidecar closed the connection without a complete answer');
  return { status: Number(status[1]), body: readJson(body, Number(status[1])) as T };
}

/** A refusal's body may not be JSON (Node's own): then it reads as `{}` and the status speaks. */
function readJson(body: Buffer, status: number): unknown {
  if (!body.length) return {};
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    if (status === 200) throw err;
    return {};
  }
}

// The file tools run here, where the files are (activities/sidecar/file-tools.ts). The agent
// names sandbox paths; unisolated (process mode) the folders are elsewhere on the host.
const WORKSPACE = { input: process.env.WORKSPACE_INPUT ?? '/workspace/input', output: process.env.WORKSPACE_OUTPUT ?? '/workspace/output' };
const READ_CHUNK = 65536;

/** The host path of a sandbox path under /workspace/input or /workspace/output, or null. */
function hostPath(p: unknown): string | null {
  if (typeof p !== 'string') return null;
  const norm = path.posix.normalize(p);
  for (const root of ['input', 'output'] as const) {
    const prefix = `/workspace/${root}/`;
    if (norm.startsWith(prefix) && norm.length > prefix.length) return path.join(WORKSPACE[root], norm.slice(prefix.length));
  }
  return null;
}

function listed(root: 'input' | 'output'): string[] {
  const out: string[] = [];
  const walk = (dir: string, shown: string) => {
    if (!fs.existsSync(dir)) return;
    for (const name of fs.readdirSync(dir).sort()) {
      const st = fs.lstatSync(path.join(dir, name));
      if (st.isDirectory()) walk(path.join(dir, name), `${shown}/${name}`);
      else if (st.isFile()) out.push(`${shown}/${name} (${st.size} bytes)`);
    }
  };
  walk(WORKSPACE[root], `/workspace/${root}`);
  return out;
}

function fileTool(name: string, a: Record<string, unknown>, limits: FileLimits): string {
  if (name === 'list_files') {
    const inputs = listed('input');
    const outputs = listed('output');
    return `Input files:\n${inputs.join('\n') || '(none)'}\nOutput files:\n${outputs.join('\n') || '(none)'}`;
  }
  if (name === 'read_file') {
    const file = hostPath(a.path);
    if (!file || !fs.existsSync(file) || !fs.lstatSync(file).isFile()) return `No file at ${String(a.path)}: see list_files`;
    const size = fs.statSync(file).size;
    const offset = Number.isInteger(a.offset) && (a.offset as number) > 0 ? (a.offset as number) : 0;
    const buf = Buffer.alloc(Math.max(0, Math.min(READ_CHUNK, size - offset)));
    const fd = fs.openSync(file, 'r');
    try {
      fs.readSync(fd, buf, 0, buf.length, offset);
    } finally {
      fs.closeSync(fd);
    }
    const rest = size - offset - buf.length;
    const text = buf.toString(a.encoding === 'base64' ? 'base64' : 'utf8');
    return rest > 0 ? `${text}\n[${rest} more bytes: call read_file with offset ${offset + buf.length}]` : text;
  }
  // write_file: a plain name in the output folder, within the run's bounds.
  const fileName = String(a.name ?? '');
  if (!fileName || fileName === '.' || fileName === '..' || /[/\\]/.test(fileName) || fileName.includes('\0') || fileName.length > 255) {
    return 'write_file needs `name`: a file name without folders, e.g. summary.md';
  }
  const data = Buffer.from(String(a.content ?? ''), a.encoding === 'base64' ? 'base64' : 'utf8');
  const target = path.join(WORKSPACE.output, fileName);
  const existing = fs.readdirSync(WORKSPACE.output);
  if (!existing.includes(fileName) && existing.length >= limits.maxOutputFiles) return `Not written: a run keeps at most ${limits.maxOutputFiles} files`;
  const others = existing.filter((n) => n !== fileName).reduce((n, f) => n + fs.statSync(path.join(WORKSPACE.output, f)).size, 0);
  const before = a.append === true && existing.includes(fileName) ? fs.statSync(target).size : 0;
  if (others + before + data.length > limits.maxOutputBytes) return `Not written: a run's files may hold at most ${limits.maxOutputBytes} bytes`;
  if (a.append === true) fs.appendFileSync(target, data);
  else fs.writeFileSync(target, data);
  return `Wrote ${data.length} bytes to /workspace/output/${fileName}`;
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** Loaded for an agent that runs code only (DESIGN.md 9): the others never pay for it. */
let workspaceTools: typeof import('./workspace-tools.ts') | undefined;

/**
 * A workspace tool call: announced to the sidecar, which answers it from the run's journal when an
 * earlier attempt completed it (a resumed run does not run a command twice), else carried out
 * here and its result recorded.
 */
async function workspaceTool(id: string, name: string, args: unknown): Promise<string> {
  const step: LocalBegin = { id, name, arguments: args };
  const begun = await call<Answer<LocalBeginAnswer>>('POST', PATHS.localBegin, step);
  if (begun.status !== 200) fail(begun.body.error ?? `the ${step.name} call was refused with ${begun.status}`);
  if (begun.body.result) return begun.body.result.content;
  workspaceTools ??= await import('./workspace-tools.ts');
  let content: string;
  try {
    content = await workspaceTools.carryOut(step.name, (args ?? {}) as Record<string, unknown>, { commandId: id, timeoutMs: begun.body.timeoutMs });
  } catch (err) {
    content = `${step.name} failed: ${(err as Error).message}`;
  }
  const ended = await call<Answer<ToolResult>>('POST', PATHS.localEnd, { ...step, content } satisfies LocalEnd);
  if (ended.status !== 200) fail(ended.body.error ?? `the ${step.name} result was refused with ${ended.status}`);
  return ended.body.content;
}

async function main(): Promise<void> {
  // A chat turn (activities/chat/) brings the conversation so far instead of an input, and ends
  // with the model's text answer, handed to the sidecar as the reply.
  const { status, body: run } = await call<Answer<RunSpec>>('GET', PATHS.run);
  if (status !== 200) fail(run.error ?? `the run could not be read from the sidecar (${status})`);
  const local = new Set(run.localTools ?? []);
  const messages: ChatMessage[] = [
    { role: 'system', content: run.system },
    ...(run.conversation ?? [{ role: 'user', content: JSON.stringify(run.input ?? {}) }]),
  ];
  let nudges = 0;
  for (let turn = 1; turn <= run.maxTurns; turn++) {
    const res = await call<Answer<Partial<ModelAnswer>>>('POST', PATHS.model, { messages } satisfies ModelRequest);
    if (res.status !== 200 || !res.body.message) fail(res.body.error ?? `model call failed with ${res.status}`);
    const message = res.body.message;
    messages.push(message);
    const calls = message.tool_calls ?? [];
    if (calls.length === 0 && run.conversation) {
      const reply = await call<Answer<object>>('POST', PATHS.reply, { content: message.content ?? '' } satisfies ReplyRequest);
      if (reply.status !== 200) fail(reply.body.error ?? `the reply was refused with ${reply.status}`);
      return;
    }
    if (calls.length === 0) {
      if (++nudges > MAX_NUDGES) fail('The model stopped without calling the output tool');
      messages.push({ role: 'user', content: 'Call the `output` tool with your result to finish.' });
      continue;
    }
    let done = false;
    for (const [i, c] of calls.entries()) {
      let args: unknown;
      try {
        args = JSON.parse(c.function.arguments || '{}');
      } catch {
        messages.push({ role: 'tool', tool_call_id: c.id, content: 'The arguments are not valid JSON; call the tool again.' });
        continue;
      }
      if (local.has(c.function.name) && run.workspace) {
        // The call's id keys its journal step and its command's api-calls: one every provider gives.
        messages.push({ role: 'tool', tool_call_id: c.id, content: await workspaceTool(c.id || `call_${turn}_${i}`, c.function.name, args) });
        continue;
      }
      if (local.has(c.function.name)) {
        let content: string;
        try {
          content = fileTool(c.function.name, (args ?? {}) as Record<string, unknown>, run.files ?? { maxOutputFiles: 0, maxOutputBytes: 0 });
        } catch (err) {
          content = `${c.function.name} failed: ${(err as Error).message}`;
        }
        messages.push({ role: 'tool', tool_call_id: c.id, content });
        continue;
      }
      const r = await call<Answer<ToolResult>>('POST', `${PATHS.tools}${encodeURIComponent(c.function.name)}`, { arguments: args } satisfies ToolRequest);
      if (r.status !== 200) fail(r.body.error ?? `the ${c.function.name} call failed with ${r.status}`);
      messages.push({ role: 'tool', tool_call_id: c.id, content: r.body.content });
      if (r.body.done) done = true;
    }
    if (done) return;
  }
  fail(`The agent did not finish within ${run.maxTurns} model turns`);
}

/**
 * A warm sandbox (activities/sandbox/pool.ts) starts before its run exists: the runtime says
 * `ready` on stdout and waits for the go on stdin, which comes once its run's sidecar listens.
 * Stdin closed without a go: the sandbox was not needed.
 */
function goSignal(): Promise<void> {
  if (!process.argv.includes('--warm')) return Promise.resolve();
  return new Promise((resolve) => {
    const unneeded = () => process.exit(0);
    process.stdin.once('end', unneeded);
    process.stdin.once('data', () => {
      process.stdin.off('end', unneeded);
      process.stdin.destroy();
      resolve();
    });
    process.stdout.write('ready\n');
  });
}

if (process.argv[2] === '--api-call') {
  // `api-call` run by a command (runtime-files.ts): the same client of the sidecar's socket.
  import('./api-call.ts')
    .then((cli) => cli.apiCallCommand(process.argv.slice(3), (request) => call('POST', PATHS.apiCall, request)))
    .catch((err: Error) => {
      process.stderr.write(`api-call: ${err.message}\n`);
      process.exitCode = 1;
    });
} else {
  goSignal()
    .then(main)
    .then(
      () => process.exit(0),
      (err) => fail(`runtime error: ${(err as Error).message}`),
    );
}
