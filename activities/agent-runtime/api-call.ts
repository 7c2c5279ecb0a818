// `api-call`, the command through which programs in the sandbox reach an integration (DESIGN.md
// 9): `api-call <integration> <METHOD> <url> [-H 'Name: value']... [--data @file|-]`. It asks the
// sidecar over the sandbox's socket, which carries the call out as it does the `api_call` tool
// (activities/sidecar/api-call.ts: authorized_uris, the credential injected outside the sandbox,
// redaction, the run's journal). The body of the answer goes to stdout, `HTTP <status>` to
// stderr, exit 0 for any answer; 1 when the sidecar refuses the call, 2 for a usage error. Run by
// the runtime's entry point (`main.mjs --api-call`, bin/api-call): Node built-ins only.
import type { ProgramApiAnswer, ProgramApiCall, SidecarError } from '../sidecar/protocol.ts';

const fs = process.getBuiltinModule('node:fs');

const USAGE = "usage: api-call <integration> <METHOD> <url> [-H 'Name: value']... [--data @file|-|text]";

class UsageError extends Error {}

/** The call the arguments describe; the body read from its file or stdin. */
export function parseArguments(argv: string[], command: string): ProgramApiCall {
  const positional: string[] = [];
  const headers: Record<string, string> = {};
  let body: Buffer | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-H' || arg === '--header') {
      const header = argv[++i];
      const colon = header?.indexOf(':') ?? -1;
      if (colon <= 0) throw new UsageError(`${arg} takes 'Name: value'`);
      headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
    } else if (arg === '-d' || arg === '--data') {
      const data = argv[++i];
      if (data === undefined) throw new UsageError(`${arg} takes @file, - (stdin) or the body itself`);
      body = data === '-' ? fs.readFileSync(0) : data.startsWith('@') ? fs.readFileSync(data.slice(1)) : Buffer.from(data);
    } else if (arg === '-h' || arg === '--help') {
      throw new UsageError('');
    } else if (arg.startsWith('-') && arg.length > 1) {
      throw new UsageError(`unknown option ${arg}`);
    } else {
      positional.push(arg);
    }
  }
  if (positional.length !== 3)
    throw new UsageError(`expected <integration> <METHOD> <url>, got ${positional.length} argument${positional.length === 1 ? '' : 's'}`);
  const [integration, method, url] = positional;
  return { command, integration, method: method.toUpperCase(), url, headers, ...(body ? { body: body.toString('base64') } : {}) };
}

function write(stream: NodeJS.WriteStream, data: string | Buffer): Promise<void> {
  return new Promise((resolve) => stream.write(data, () => resolve()));
}

/** Runs the command: `ask` sends the call to the sidecar. Sets the exit code; never exits (stdout drains first). */
export async function apiCallCommand(
  argv: string[],
  ask: (call: ProgramApiCall) => Promise<{ status: number; body: ProgramApiAnswer & Partial<SidecarError> }>,
): Promise<void> {
  // The runtime names the bash call a command belongs to; a call keyed by it is journaled (a
  // resumed run answers it from there).
  const command = process.env.AGENT_COMMAND_ID;
  let request: ProgramApiCall;
  try {
    if (!command) throw new UsageError('api-call works only in a command the agent runs with its bash tool');
    request = parseArguments(argv, command);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    await write(process.stderr, `${err.message ? `api-call: ${err.message}\n` : ''}${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  const answer = await ask(request);
  if (answer.status !== 200 || answer.body.status === undefined) {
    await write(process.stderr, `api-call: ${answer.body.refused ?? answer.body.error ?? `the sidecar answered ${answer.status}`}\n`);
    process.exitCode = 1;
    return;
  }
  await write(process.stdout, Buffer.from(answer.body.body ?? '', 'base64'));
  await write(process.stderr, `HTTP ${answer.body.status}\n`);
  process.exitCode = 0;
}
