// The sidecar of one chat turn (DESIGN.md section 3, shared/chat/README.md): the same protocol
// (sidecar/protocol.ts), session (sandbox/session.ts serves it to the sandbox) and model client
// as a run's sidecar (activities/sidecar/server.ts), serving the runtime the conversation so far
// instead of a run's input. The model is offered no tools: its text answer is the reply
// (`POST /v1/reply`). Nothing is journaled: a turn whose worker is lost is answered again from
// the start on another worker, and only the stored reply counts.
import http from 'node:http';
import type { Dispatcher } from 'undici';
import type { Logger } from '../../shared/log.ts';
import type { ModelConfig } from '../../shared/models/resolve.ts';
import { NO_USAGE, sumUsage } from '../../shared/models/usage.ts';
import type { RunUsage } from '../../shared/runs/model.ts';
import { type ChatMessage, type ModelAnswer, type RunSpec, SIDECAR_PATHS, type ToolResult } from '../sidecar/protocol.ts';
import { complete, ModelCallError } from '../sidecar/providers.ts';
import { readBody, send, sendFailure } from '../sidecar/server.ts';

/** Model calls one turn may make: a reply needs one; the runtime re-asks only after a tool call. */
const MAX_TURNS = 4;

export interface ChatTurnSpec {
  /** For logs: the user message being answered. */
  messageId: string;
  system: string;
  /** The conversation so far, ending with the user message being answered. */
  conversation: ChatMessage[];
  model: ModelConfig;
}

export class ChatSidecar {
  readonly server: http.Server;
  /** The turn's model calls so far (shared/models/usage.ts prices each). */
  usage: RunUsage = NO_USAGE;
  modelCalls = 0;
  reply?: string;
  /** Why the turn cannot go on (a model provider error): becomes the failed reply's error. */
  fatalError?: string;
  private readonly abort = new AbortController();
  private readonly spec: ChatTurnSpec;
  private readonly deps: { dispatcher: Dispatcher; maxRequestBytes: number; log: Logger };

  constructor(spec: ChatTurnSpec, deps: { dispatcher: Dispatcher; maxRequestBytes: number; log: Logger }) {
    this.spec = spec;
    this.deps = deps;
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        deps.log.warn({ err, messageId: spec.messageId }, 'chat sidecar request failed');
        sendFailure(res, err);
      });
    });
  }

  async close(): Promise<void> {
    this.abort.abort();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    if (req.method === 'GET' && url === SIDECAR_PATHS.run) {
      return send(res, 200, { system: this.spec.system, conversation: this.spec.conversation, maxTurns: MAX_TURNS, localTools: [] } satisfies RunSpec);
    }
    const body = await readBody(req, this.deps.maxRequestBytes);
    if (req.method === 'POST' && url === SIDECAR_PATHS.model) return send(res, ...(await this.model(body.messages)));
    if (req.method === 'POST' && url === SIDECAR_PATHS.reply) {
      this.reply = String(body.content ?? '');
      return send(res, 200, {});
    }
    // The model was offered no tool; one it names anyway is refused, and it is asked again.
    if (req.method === 'POST' && url.startsWith(SIDECAR_PATHS.tools)) return send(res, 200, { content: 'No tools are available: answer in text.' } satisfies ToolResult);
    send(res, 404, { error: 'unknown sidecar route' });
  }

  private async model(messages: ChatMessage[]): Promise<[number, unknown]> {
    const { model } = this.spec;
    try {
      const completion = await complete(model, messages, [], this.deps.dispatcher, this.abort.signal);
      this.modelCalls++;
      this.usage = sumUsage(this.usage, completion.usage);
      return [200, { message: completion.message } satisfies ModelAnswer];
    } catch (err) {
      this.fatalError = err instanceof ModelCallError ? err.message : `The model call failed: ${(err as Error).message}`;
      return [502, { error: this.fatalError }];
    }
  }
}
