// The agent runtime: runs inside the sandbox with no network, no database and no secrets. It
// holds the tool-calling loop and reaches the model and the tools only through the sidecar's
// unix socket. It imports nothing but Node built-ins, because only this folder is mounted.
import http from 'node:http';

interface ToolCall {
  id: string;
  function: { name: string; arguments: string };
}
interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

const socketPath = process.env.SIDECAR_SOCKET ?? '/sidecar/sidecar.sock';
const MAX_NUDGES = 2;

function call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      { socketPath, method, path, headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as T });
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const { body: run } = await call<{ system: string; input: unknown; maxTurns: number }>('GET', '/v1/run');
  const messages: Message[] = [
    { role: 'system', content: run.system },
    { role: 'user', content: JSON.stringify(run.input ?? {}) },
  ];
  let nudges = 0;
  for (let turn = 1; turn <= run.maxTurns; turn++) {
    const res = await call<{ message?: Message; error?: string }>('POST', '/v1/model', { messages });
    if (res.status !== 200 || !res.body.message) fail(res.body.error ?? `model call failed with ${res.status}`);
    const message = res.body.message;
    messages.push(message);
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) {
      if (++nudges > MAX_NUDGES) fail('The model stopped without calling the output tool');
      messages.push({ role: 'user', content: 'Call the `output` tool with your result to finish.' });
      continue;
    }
    let done = false;
    for (const c of calls) {
      let args: unknown;
      try {
        args = JSON.parse(c.function.arguments || '{}');
      } catch {
        messages.push({ role: 'tool', tool_call_id: c.id, content: 'The arguments are not valid JSON; call the tool again.' });
        continue;
      }
      const r = await call<{ content: string; done?: boolean }>('POST', `/v1/tools/${encodeURIComponent(c.function.name)}`, { arguments: args });
      messages.push({ role: 'tool', tool_call_id: c.id, content: r.body.content });
      if (r.body.done) done = true;
    }
    if (done) return;
  }
  fail(`The agent did not finish within ${run.maxTurns} model turns`);
}

main().then(
  () => process.exit(0),
  (err) => fail(`runtime error: ${(err as Error).message}`),
);
