// The workspace tools of an agent that runs code (DESIGN.md 9), carried out here, inside the
// sandbox, where the workspace is: `bash`, and `list_files`, `read_file`, `write_file`,
// `edit_file` over the whole /workspace (paths relative to it; input/ and .skills/ read-only).
// Loaded by the runtime (main.ts) for such agents only; Node built-ins only, as the runtime.
// Paths are confined to the workspace, links resolved: a `..` that leaves it, or a link that
// leads out of it, is refused. That is a courtesy to the model, not the boundary (the sandbox
// is: bash reaches whatever the sandbox shows anyway).
import type { CommandResult } from '../sidecar/protocol.ts';

const cp = process.getBuiltinModule('node:child_process');
const fs = process.getBuiltinModule('node:fs');
const path = process.getBuiltinModule('node:path');

/** Where the workspace is: /workspace in a sandbox; the host folders unisolated (sandbox/workspace.ts, workspaceEnv). */
const ROOT = process.env.WORKSPACE_ROOT ?? '/workspace';
const READ_ONLY = [process.env.WORKSPACE_INPUT ?? `${ROOT}/input`, process.env.WORKSPACE_SKILLS ?? `${ROOT}/.skills`];
/** Where commands find `api-call` (sandbox/runtime-files.ts). */
const BIN = path.join(import.meta.dirname, 'bin');
/** Each stream of a command is cut to its last bytes for the model. */
const STREAM_LIMIT = 64 * 1024;
const READ_CHUNK = 65536;
const DEFAULT_TIMEOUT_SECONDS = 60;
const LIST_LIMIT = 1000;
/** After a command's shell exits and its group is killed, how long its output may still drain. */
const DRAIN_MS = 500;

/** A refusal the model reads as the tool's result. */
class ToolError extends Error {}

export interface CallContext {
  /** The model's id of the call: names the command for the `api-call`s it makes. */
  commandId: string;
  /** The run's remaining time, which bounds a command. */
  timeoutMs?: number;
}

/** Carries out one workspace tool call; what it answers the model. */
export async function carryOut(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<string> {
  try {
    switch (name) {
      case 'bash':
        return JSON.stringify(await bash(args, ctx));
      case 'list_files':
        return listFiles(args.path);
      case 'read_file':
        return readFile(args);
      case 'write_file':
        return writeFile(args);
      case 'edit_file':
        return editFile(args);
      default:
        return `Unknown tool "${name}"`;
    }
  } catch (err) {
    if (err instanceof ToolError) return `${name}: ${err.message}`;
    const code = (err as NodeJS.ErrnoException).code;
    return `${name} failed: ${code ? `${code} ` : ''}${(err as Error).message}`;
  }
}

const within = (p: string, root: string) => p === root || p.startsWith(`${root}/`);

function realOrSelf(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

let roots: { workspace: string; readOnly: string[] } | undefined;
function realRoots() {
  roots ??= { workspace: realOrSelf(ROOT), readOnly: READ_ONLY.map(realOrSelf) };
  return roots;
}

/** The path `p` names (relative to /workspace, or absolute under it), before links; refused when `..` leaves it. */
function lexical(p: unknown, fallback?: string): { shown: string; host: string } {
  if (p === undefined && fallback !== undefined) p = fallback;
  if (typeof p !== 'string' || p === '') throw new ToolError('`path` must be a path relative to /workspace');
  if (p.includes('\0')) throw new ToolError('`path` contains a NUL character');
  let rel = p;
  if (p.startsWith('/')) {
    const norm = path.posix.normalize(p);
    if (norm !== '/workspace' && !norm.startsWith('/workspace/')) throw new ToolError(`${p} is outside /workspace (paths are relative to /workspace)`);
    rel = norm === '/workspace' ? '.' : norm.slice('/workspace/'.length);
  }
  const norm = path.posix.normalize(rel);
  if (norm === '..' || norm.startsWith('../')) throw new ToolError(`${p} leaves /workspace`);
  return { shown: norm === '.' ? '/workspace' : `/workspace/${norm.replace(/\/$/, '')}`, host: path.join(ROOT, norm) };
}

/**
 * The real path of `p` (links resolved; for a path that does not exist yet, its deepest existing
 * folder's), which must stay in the workspace; `write`: not in its read-only folders either.
 */
function confine(p: unknown, write: boolean, fallback?: string): { shown: string; real: string } {
  const { shown, host } = lexical(p, fallback);
  const real = realPath(host, shown);
  const { workspace, readOnly } = realRoots();
  const inReadOnly = readOnly.some((r) => within(real, r));
  if (!within(real, workspace) && !inReadOnly) throw new ToolError(`${shown} leads outside /workspace (through a link)`);
  if (write && inReadOnly) throw new ToolError(`${shown} is read-only (input/ and .skills/ are)`);
  return { shown, real };
}

/** `host` with its links resolved, as far as it exists: a link to a file not made yet leads to where that file would be. */
function realPath(host: string, shown: string, depth = 0): string {
  const missing: string[] = [];
  let existing = host;
  for (;;) {
    try {
      fs.lstatSync(existing);
      break;
    } catch {
      missing.unshift(path.basename(existing));
      existing = path.dirname(existing);
    }
  }
  try {
    return path.join(fs.realpathSync(existing), ...missing);
  } catch {
    // `existing` is a link to nothing (yet): follow it by hand.
    if (depth >= 40) throw new ToolError(`${shown}: too many levels of links`);
    return realPath(path.resolve(path.dirname(existing), fs.readlinkSync(existing), ...missing), shown, depth + 1);
  }
}

/** The last STREAM_LIMIT bytes of a stream. */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  cut = false;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.chunks.length > 1 && this.size - this.chunks[0].length >= STREAM_LIMIT) {
      this.size -= this.chunks.shift()!.length;
      this.cut = true;
    }
  }

  text(): string {
    let buf = Buffer.concat(this.chunks);
    if (buf.length > STREAM_LIMIT) {
      buf = buf.subarray(buf.length - STREAM_LIMIT);
      this.cut = true;
    }
    // A cut may start inside a character.
    return this.cut ? buf.toString('utf8').replace(/^\uFFFD+/, '') : buf.toString('utf8');
  }
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * `/bin/bash -c <command>` in the workspace as the sandbox user, in a process group of its own,
 * killed with its group at its timeout; the group is killed too when the shell exits, so nothing
 * it left behind runs on (nor holds its output open).
 */
function bash(args: Record<string, unknown>, ctx: CallContext): Promise<CommandResult> {
  const command = args.command;
  if (typeof command !== 'string' || !command.trim()) throw new ToolError('`command` must be a non-empty string');
  const requested = Number.isInteger(args.timeout_seconds) && (args.timeout_seconds as number) > 0 ? (args.timeout_seconds as number) : DEFAULT_TIMEOUT_SECONDS;
  const timeoutMs = Math.max(1, Math.min(requested * 1000, ctx.timeoutMs ?? Number.POSITIVE_INFINITY));
  const started = performance.now();
  const child = cp.spawn('/bin/bash', ['-c', command], {
    cwd: ROOT,
    detached: true, // its own session and process group
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: `/usr/bin:/bin:${BIN}`,
      HOME: process.env.HOME ?? ROOT,
      TMPDIR: process.env.WORKSPACE_ROOT ? (process.env.TMPDIR ?? '/tmp') : '/tmp',
      LANG: 'C.UTF-8',
      SIDECAR_SOCKET: process.env.SIDECAR_SOCKET ?? '',
      AGENT_COMMAND_ID: ctx.commandId,
      SANDBOX_NODE: process.execPath,
    },
  });
  const out = new Tail();
  const err = new Tail();
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  return new Promise((resolve) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    const closed = new Promise<void>((r) => child.once('close', () => r()));
    let finished = false;
    const finish = async (code: number | null) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      killGroup(child.pid);
      // Output still in the pipes drains; a process that left the group keeps them open no longer than this.
      await Promise.race([closed, new Promise((r) => setTimeout(r, DRAIN_MS))]);
      child.stdout.destroy();
      child.stderr.destroy();
      let stderr = err.text();
      if (timedOut) stderr += `${stderr && !stderr.endsWith('\n') ? '\n' : ''}[killed: the command ran past its timeout of ${Math.round(timeoutMs / 1000)} s]`;
      resolve({
        exit_code: timedOut ? null : code,
        stdout: out.text(),
        stderr,
        truncated: out.cut || err.cut,
        duration_ms: Math.round(performance.now() - started),
      });
    };
    child.once('exit', (code) => void finish(code));
    child.once('error', (e) => {
      err.push(Buffer.from(e.message));
      void finish(null);
    });
  });
}

function describe(full: string, shown: string): string {
  const st = fs.lstatSync(full);
  if (st.isSymbolicLink()) return `${shown} -> ${fs.readlinkSync(full)}`;
  if (st.isDirectory()) return `${shown}/`;
  return `${shown} (${st.size} bytes)`;
}

function listFiles(p: unknown): string {
  const { shown, real } = confine(p, false, '.');
  if (!fs.statSync(real).isDirectory()) return describe(real, shown);
  const lines: string[] = [];
  let more = 0;
  const walk = (dir: string, shownDir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      if (lines.length >= LIST_LIMIT) {
        more++;
        continue;
      }
      const full = path.join(dir, name);
      const entry = `${shownDir}/${name}`;
      lines.push(describe(full, entry));
      if (fs.lstatSync(full).isDirectory()) walk(full, entry);
    }
  };
  walk(real, shown);
  if (more) lines.push(`[${more} more entries: list a folder within]`);
  return `${lines.join('\n') || `${shown} is empty`}\n(input/ and .skills/ are read-only; files left in output/ are returned)`;
}

function readFile(a: Record<string, unknown>): string {
  const { shown, real } = confine(a.path, false);
  if (!fs.existsSync(real) || !fs.statSync(real).isFile()) throw new ToolError(`no file at ${shown}: see list_files`);
  const size = fs.statSync(real).size;
  const offset = Number.isInteger(a.offset) && (a.offset as number) > 0 ? (a.offset as number) : 0;
  const buf = Buffer.alloc(Math.max(0, Math.min(READ_CHUNK, size - offset)));
  const fd = fs.openSync(real, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    fs.readSync(fd, buf, 0, buf.length, offset);
  } finally {
    fs.closeSync(fd);
  }
  const rest = size - offset - buf.length;
  const text = buf.toString(a.encoding === 'base64' ? 'base64' : 'utf8');
  return rest > 0 ? `${text}\n[${rest} more bytes: call read_file with offset ${offset + buf.length}]` : text;
}

/** Writes `data` to the real path `real` (made by confine), its folders made as needed, never through a link. */
function writeConfined(real: string, data: Buffer): void {
  fs.mkdirSync(path.dirname(real), { recursive: true });
  const fd = fs.openSync(real, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o644);
  try {
    fs.writeSync(fd, data);
  } finally {
    fs.closeSync(fd);
  }
}

function writeFile(a: Record<string, unknown>): string {
  const { shown, real } = confine(a.path, true);
  if (typeof a.content !== 'string') throw new ToolError('`content` must be a string');
  const data = Buffer.from(a.content, a.encoding === 'base64' ? 'base64' : 'utf8');
  writeConfined(real, data);
  return `Wrote ${data.length} bytes to ${shown}`;
}

function editFile(a: Record<string, unknown>): string {
  const { shown, real } = confine(a.path, true);
  if (typeof a.old !== 'string' || a.old === '') throw new ToolError('`old` must be the non-empty text to replace');
  if (typeof a.new !== 'string') throw new ToolError('`new` must be a string');
  if (!fs.existsSync(real) || !fs.statSync(real).isFile()) throw new ToolError(`no file at ${shown}: see list_files`);
  const text = fs.readFileSync(real, 'utf8');
  let count = 0;
  for (let i = text.indexOf(a.old); i >= 0 && count < 2; i = text.indexOf(a.old, i + a.old.length)) count++;
  if (count === 0) throw new ToolError(`\`old\` was not found in ${shown}: nothing was changed`);
  if (count > 1)
    throw new ToolError(`\`old\` occurs more than once in ${shown}: include more of the text around it so that it names one place; nothing was changed`);
  const at = text.indexOf(a.old);
  writeConfined(real, Buffer.from(text.slice(0, at) + a.new + text.slice(at + a.old.length)));
  return `Replaced 1 occurrence in ${shown}`;
}
