// What the agent runtime (activities/agent-runtime/main.ts) and its sidecar (server.ts for a run,
// chat/sidecar.ts for a chat turn) say to each other: JSON over HTTP/1.1 on the sidecar's socket,
// one exchange per connection (activities/sandbox/README.md). Declared once, here. The runtime
// imports it with `import type` only: the sandbox mounts nothing but the runtime's own folder,
// and type imports vanish when its types are stripped (sandbox/spawn.ts).

/** A tool call in a model's answer (OpenAI chat-completions shape, which the runtime speaks). */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** One message of the conversation the runtime keeps and sends with each model call. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

/**
 * Where the runtime sends each request. The runtime cannot import these values: it declares
 * its own copy typed `SidecarPaths`, so a path changed on one side only does not compile.
 */
export const SIDECAR_PATHS = {
  /** GET: the work (RunSpec). */
  run: '/v1/run',
  /** POST ModelRequest: one model call, answered ModelAnswer. */
  model: '/v1/model',
  /** POST ToolRequest to `tools` + the tool's name (URI-encoded), answered ToolResult. */
  tools: '/v1/tools/',
  /** POST ReplyRequest: a chat turn's answer. */
  reply: '/v1/reply',
  /** POST LocalBegin: a workspace tool (DESIGN.md 9) the runtime is about to carry out; answered LocalBeginAnswer. */
  localBegin: '/v1/local/begin',
  /** POST LocalEnd: its result, journaled with its effects (a command's log line); answered ToolResult. */
  localEnd: '/v1/local/end',
  /** POST ProgramApiCall: `api-call` run by a command (agent-runtime/api-call.ts); answered ProgramApiAnswer. */
  apiCall: '/v1/api-call',
} as const;
export type SidecarPaths = typeof SIDECAR_PATHS;

/** Bounds of the files the runtime's own file tools write. */
export interface FileLimits {
  maxOutputFiles: number;
  maxOutputBytes: number;
}

/** GET /v1/run: a run brings its input, a chat turn the conversation so far instead. */
export interface RunSpec {
  system: string;
  input?: unknown;
  conversation?: ChatMessage[];
  maxTurns: number;
  /** Tools the runtime carries out itself (the file tools): never sent to `tools`. */
  localTools: string[];
  files?: FileLimits;
  /**
   * The agent runs code (DESIGN.md 9): `localTools` are the workspace tools (agent-runtime/
   * workspace-tools.ts), each call announced (`localBegin`) and its result recorded (`localEnd`).
   */
  workspace?: boolean;
}

export interface ModelRequest {
  messages: ChatMessage[];
}
export interface ModelAnswer {
  message: ChatMessage;
}

export interface ToolRequest {
  arguments: unknown;
}
/** `done`: the run is complete (its output was recorded). */
export interface ToolResult {
  content: string;
  done?: boolean;
}

export interface ReplyRequest {
  content: string;
}

/** A workspace tool call: `id` is the model's tool call id (it keys the call's `api-call`s). */
export interface LocalBegin {
  id: string;
  name: string;
  arguments: unknown;
}
/**
 * `result`: the call completed in an earlier attempt of the run (its journal), not to be carried
 * out again. Else carry it out; `timeoutMs` bounds a command (the run's remaining time).
 */
export interface LocalBeginAnswer {
  result?: ToolResult;
  timeoutMs?: number;
}
export interface LocalEnd extends LocalBegin {
  /** What the tool answers the model. */
  content: string;
}

/** What `bash` answers the model, as JSON (DESIGN.md 9); `exit_code` null when killed. */
export interface CommandResult {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  duration_ms: number;
}

/** One `api-call` (DESIGN.md 9): `command` is the id of the bash call running it; bodies in base64. */
export interface ProgramApiCall {
  command: string;
  integration: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}
/** The target's answer (headers redacted, body redacted when textual, in base64), or why none. */
export interface ProgramApiAnswer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  refused?: string;
}

/** The body of any answer but 200: the runtime fails its run with `error`. */
export interface SidecarError {
  error: string;
}
