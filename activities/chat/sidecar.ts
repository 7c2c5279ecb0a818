// The sidecar of one chat turn (DESIGN.md section 3, shared/chat/README.md): the same socket
// plumbing, model client and pricing as a run's sidecar (activities/sidecar/server.ts), serving
// the runtime the conversation so far instead of a run's input. The model is offered no tools:
// its text answer is the reply (`POST /v1/reply`). Nothing is journaled: a turn whose worker is
// lost is answered again from the start on another worker, and only the stored reply counts.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Dispatcher } from 'undici';
import type { Logger } from '../../shared/log.ts';
import type { ModelConfig } from '../../shared/models/resolve.ts';
import type { RunUsage } from '../../shared/runs/model.ts';
import { type ChatMessage, complete, ModelCallError } from '../sidecar/providers.ts';
import { addUsage, listenForSandbox, readBody, send, sendFailure } from '../sidecar/server.ts';

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
  readonly socketDir: string;
  readonly usage: RunUsage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  modelCalls = 0;
  reply?: string;
  /** Why the turn cannot go on (a model provider error): becomes the failed reply's error. */
  fatalError?: string;
  private readonly server: http.Server;
  private readonly abort = new AbortController();
  private readonly spec: ChatTurnSpec;
  private readonly deps: { dispatcher: Dispatcher; maxRequestBytes: number; log: Logger };

  /** `socketDir`: a warm sandbox's (its /sidecar), else a folder of its own. */
  constructor(spec: ChatTurnSpec, deps: { dispatcher: Dispatcher; maxRequestBytes: number; log: Logger; socketDir?: string }) {
    this.spec = spec;
    this.deps = deps;
    this.socketDir = deps.socketDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-'));
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        deps.log.warn({ err, messageId: spec.messageId }, 'chat sidecar request failed');
        sendFailure(res, err);
      });
    });
  }

  listen(): Promise<void> {
    return listenForSandbox(this.server, this.socketDir);
  }

  async close(): Promise<void> {
    this.abort.abort();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    fs.rmSync(this.socketDir, { recursive: true, force: true });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    if (req.method === 'GET' && url === '/v1/run') {
      return send(res, 200, { system: this.spec.system, conversation: this.spec.conversation, maxTurns: MAX_TURNS, localTools: [] });
    }
    const body = await readBody(req, this.deps.maxRequestBytes);
    if (req.method === 'POST' && url === '/v1/model') return send(res, ...(await this.model(body.messages)));
    if (req.method === 'POST' && url === '/v1/reply') {
      this.reply = String(body.content ?? '');
      return send(res, 200, {});
    }
    // The model was offered no tool; one it names anyway is refused, and it is asked again.
    if (req.method === 'POST' && url.startsWith('/v1/tools/')) return send(res, 200, { content: 'No tools are available: answer in text.' });
    send(res, 404, { error: 'unknown sidecar route' });
  }

  private async model(messages: ChatMessage[]): Promise<[number, unknown]> {
    const { model } = this.spec;
    try {
      const completion = await complete(model, messages, [], this.deps.dispatcher, this.abort.signal);
      this.modelCalls++;
      addUsage(this.usage, completion.usage, model);
      return [200, { message: completion.message }];
    } catch (err) {
      this.fatalError = err instanceof ModelCallError ? err.message : `The model call failed: ${(err as Error).message}`;
      return [502, { error: this.fatalError }];
    }
  }
}
