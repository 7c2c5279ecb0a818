// The sidecar of one chat turn (DESIGN.md section 3, shared/chat/README.md): the same protocol
// (sidecar/protocol.ts), session (sandbox/session.ts serves it to the sandbox) and model client
// as a run's sidecar (activities/sidecar/server.ts), serving the runtime the conversation so far
// instead of a run's input. The model is offered no tools, but those of an agent that runs code
// (`bash` and the workspace's file tools, DESIGN.md 9, carried out in the sandbox as in a run:
// sidecar/workspace-steps.ts): its text answer is the reply (`POST /v1/reply`). Nothing is
// journaled: a turn whose worker is lost is answered again from the start on another worker, and
// only the stored reply counts.
import http from 'node:http';
import type { Dispatcher } from 'undici';
import type { Logger } from '../../shared/log.ts';
import type { ModelConfig } from '../../shared/models/resolve.ts';
import { NO_USAGE, sumUsage } from '../../shared/models/usage.ts';
import type { RunUsage } from '../../shared/runs/model.ts';
import { type ChatMessage, type ModelAnswer, type RunSpec, SIDECAR_PATHS, type ToolResult } from '../sidecar/protocol.ts';
import { complete, ModelCallError, type ToolDef } from '../sidecar/providers.ts';
import { readBody, send, sendFailure } from '../sidecar/server.ts';
import { WorkspaceSteps } from '../sidecar/workspace-steps.ts';

/** Model calls one turn may make: a reply needs one; the runtime re-asks only after a tool call. */
const MAX_TURNS = 4;
/** With the workspace tools, a turn may work a while before it answers. */
const MAX_TURNS_WITH_TOOLS = 20;

export interface ChatTurnSpec {
  /** For logs: the user message being answered. */
  messageId: string;
  system: string;
  /** The conversation so far, ending with the user message being answered. */
  conversation: ChatMessage[];
  model: ModelConfig;
  /** The workspace tools of an agent that runs code (sidecar/workspace-tools.ts); none otherwise. */
  tools?: ToolDef[];
  /** When the turn times out (epoch ms): bounds its commands. */
  endsAt?: number;
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
  private readonly workspace?: WorkspaceSteps;

  constructor(spec: ChatTurnSpec, deps: { dispatcher: Dispatcher; maxRequestBytes: number; log: Logger }) {
    this.spec = spec;
    this.deps = deps;
    if (spec.tools?.length) this.workspace = new WorkspaceSteps({ deadline: () => spec.endsAt, noApiCall: 'api-call is not available in chat turns' });
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
      const tools = this.spec.tools ?? [];
      return send(res, 200, {
        system: this.spec.system,
        conversation: this.spec.conversation,
        maxTurns: tools.length ? MAX_TURNS_WITH_TOOLS : MAX_TURNS,
        localTools: tools.map((t) => t.name),
        ...(this.workspace ? { workspace: true } : {}),
      } satisfies RunSpec);
    }
    const body = await readBody(req, this.deps.maxRequestBytes);
    const local = this.workspace?.route(req.method, url, body, (step) => step());
    if (local) return send(res, 200, await local);
    if (req.method === 'POST' && url === SIDECAR_PATHS.model) return send(res, ...(await this.model(body.messages)));
    if (req.method === 'POST' && url === SIDECAR_PATHS.reply) {
      this.reply = String(body.content ?? '');
      return send(res, 200, {});
    }
    // The model was offered no tool; one it names anyway is refused, and it is asked again.
    if (req.method === 'POST' && url.startsWith(SIDECAR_PATHS.tools))
      return send(res, 200, { content: 'No tools are available: answer in text.' } satisfies ToolResult);
    send(res, 404, { error: 'unknown sidecar route' });
  }

  private async model(messages: ChatMessage[]): Promise<[number, unknown]> {
    const { model } = this.spec;
    try {
      const completion = await complete(model, messages, this.spec.tools ?? [], this.deps.dispatcher, this.abort.signal);
      this.modelCalls++;
      this.usage = sumUsage(this.usage, completion.usage);
      return [200, { message: completion.message } satisfies ModelAnswer];
    } catch (err) {
      this.fatalError = err instanceof ModelCallError ? err.message : `The model call failed: ${(err as Error).message}`;
      return [502, { error: this.fatalError }];
    }
  }
}
