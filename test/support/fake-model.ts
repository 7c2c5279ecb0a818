// A scripted OpenAI-compatible chat-completions server: a test double of a third-party API,
// started by the tests on 127.0.0.1. Each request is answered by the script's next step.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** The TCP connection it came on (1, 2, ... in the order they were opened). */
  connection: number;
}

export type Step = (req: RecordedRequest) => unknown | Promise<unknown>;

/** The content of the last tool message the runtime sent back in `req`. */
export const lastToolResult = (req: RecordedRequest) => req.body.messages.filter((m: any) => m.role === 'tool').at(-1)?.content as string;

/** A chat completion answering in text (a chat turn's reply). */
export function textAnswer(content: string, usage = { prompt_tokens: 12, completion_tokens: 3 }) {
  return { id: 'chatcmpl-x', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }], usage };
}

/** A chat completion whose one tool call is `name(args)`. */
export function toolCall(name: string, args: unknown, usage = { prompt_tokens: 10, completion_tokens: 5 }) {
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `call_${Math.random().toString(36).slice(2)}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
        },
      },
    ],
    usage,
  };
}

/** A streamed answer: each frame is written on its own, after `before(i)` settles. */
export class SseAnswer {
  readonly frames: string[];
  readonly before?: (i: number) => Promise<void>;
  constructor(frames: string[], before?: (i: number) => Promise<void>) {
    this.frames = frames;
    this.before = before;
  }
}

/** `data: <json>` frames; OpenAI-style streams end with `data: [DONE]`. */
export function sseFrames(events: unknown[], done = true): string[] {
  return [...events.map((e) => `data: ${JSON.stringify(e)}\n\n`), ...(done ? ['data: [DONE]\n\n'] : [])];
}

export class FakeModel {
  readonly requests: RecordedRequest[] = [];
  /** Answers by run: the first user message (the run input as JSON) picks the script. */
  private readonly scripts = new Map<string, Step[]>();
  private fallback: Step = () => toolCall('output', {});
  private server?: http.Server;
  url = '';

  /** Scripts the answers for runs whose input contains `marker` (e.g. a unique string). */
  script(marker: string, steps: Step[]): void {
    this.scripts.set(marker, [...steps]);
  }

  setFallback(step: Step): void {
    this.fallback = step;
  }

  private next(req: RecordedRequest): Step {
    const first = (req.body.messages ?? []).find((m: any) => m.role === 'user')?.content ?? '';
    // OpenAI sends a string; Anthropic a list of content blocks.
    const firstUser = typeof first === 'string' ? first : JSON.stringify(first);
    for (const [marker, steps] of this.scripts) {
      if (firstUser.includes(marker)) return steps.length > 1 ? steps.shift()! : steps[0];
    }
    return this.fallback;
  }

  private readonly connections = new WeakMap<object, number>();
  private opened = 0;
  private connectionOf(socket: object): number {
    if (!this.connections.has(socket)) this.connections.set(socket, ++this.opened);
    return this.connections.get(socket)!;
  }

  async start(): Promise<this> {
    this.server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      const recorded = { path: req.url ?? '/', headers: req.headers, body, connection: this.connectionOf(req.socket) };
      this.requests.push(recorded);
      try {
        const answer = await this.next(recorded)(recorded);
        if (answer instanceof SseAnswer) {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          for (const [i, frame] of answer.frames.entries()) {
            await answer.before?.(i);
            res.write(frame);
          }
          res.end();
          return;
        }
        if (answer && typeof answer === 'object' && 'status' in answer && 'body' in answer) {
          const a = answer as { status: number; body: unknown };
          res.writeHead(a.status, { 'content-type': 'application/json' });
          res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(typeof answer === 'string' ? answer : JSON.stringify(answer));
      } catch (err) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: (err as Error).message }));
      }
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
