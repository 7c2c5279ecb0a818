// The single error factory. Every failure a client can see is a ProblemError with a stable
// `code` from this catalogue; api/middleware/problems.ts turns it into an RFC 9457 document.
// The catalogue is also served as the documentation behind each problem's `type` URI.

export interface ErrorEntry {
  status: number;
  title: string;
  description: string;
}

export const ERROR_CATALOG = {
  validation_failed: {
    status: 400,
    title: 'Validation failed',
    description: 'The body, query or path parameters do not match the schema. `errors[]` lists every problem; `detail` summarizes the first.',
  },
  invalid_json: { status: 400, title: 'Malformed JSON', description: 'The request body is not valid JSON.' },
  invalid_request: {
    status: 400,
    title: 'Invalid request',
    description: 'The request asks for something that cannot exist, such as an API key scope no key can carry.',
  },
  header_not_allowed: {
    status: 400,
    title: 'Header not allowed',
    description: 'A header such as `Service-User` was sent with a credential that cannot honor it.',
  },
  invalid_end_user_id: { status: 400, title: 'Invalid end-user id', description: 'The `Service-User` value does not start with `eu_`.' },
  view_as_unsupported: { status: 400, title: 'View-as unsupported', description: '`X-View-As` cannot be used with an API key.' },
  unsupported_api_version: {
    status: 400,
    title: 'Unsupported API version',
    description: 'The `Service-Version` header or the organization pin names a version this server cannot serve.',
  },
  space_required: { status: 400, title: 'Space required', description: 'A space-scoped route was called without `X-Space-Id`.' },
  invalid_archive: {
    status: 400,
    title: 'Invalid archive',
    description:
      'The uploaded package is not a safe zip archive: not a zip, an unsafe entry (`..`, absolute path, backslash, symlink), too ' +
      'many entries, a decompression bomb, or a required file missing.',
  },
  org_required: { status: 400, title: 'Organization required', description: 'An organization-scoped route was called without `X-Org-Id`.' },
  blocked_url: {
    status: 400,
    title: 'Blocked URL',
    description: 'Webhook URLs must be HTTPS and must not point at a private, loopback, link-local or reserved address (localhost and *.localhost included).',
  },
  webhook_limit_reached: { status: 409, title: 'Webhook limit reached', description: 'A space, and an organization, hold at most 20 webhooks each.' },
  idempotency_not_supported: {
    status: 400,
    title: 'Idempotency not supported',
    description: 'This operation does not honor Idempotency-Key; send the request without it.',
  },
  invalid_idempotency_key: { status: 400, title: 'Invalid idempotency key', description: 'Idempotency-Key is at most 255 characters.' },
  idempotency_in_progress: {
    status: 409,
    title: 'Idempotent request in progress',
    description: 'A request with this Idempotency-Key is still running; retry once it has finished.',
  },
  idempotency_conflict: {
    status: 422,
    title: 'Idempotency key reused',
    description: 'This Idempotency-Key was used with another method, path, query or body.',
  },
  unauthorized: { status: 401, title: 'Unauthorized', description: 'No credential, an invalid or expired API key, or no valid session.' },
  forbidden: { status: 403, title: 'Forbidden', description: 'The credential is valid but lacks the permission, or a context header contradicts it.' },
  not_a_space_member: { status: 403, title: 'Not a space member', description: 'The caller holds no role in the requested space.' },
  invalid_end_user: { status: 403, title: 'Invalid end-user', description: "`Service-User` names no end-user of the API key's space." },
  not_found: { status: 404, title: 'Not found', description: 'The resource does not exist, or the caller cannot read it.' },
  method_not_allowed: { status: 405, title: 'Method not allowed', description: 'The path exists but not with this method.' },
  conflict: { status: 409, title: 'Conflict', description: 'The request conflicts with the current state of the resource.' },
  version_exists: { status: 409, title: 'Version exists', description: 'This version of the package is already published; versions are immutable.' },
  runs_in_progress: { status: 409, title: 'Runs in progress', description: 'The agent has pending or running runs; wait for them or cancel them first.' },
  dependency_unresolved: {
    status: 409,
    title: 'Dependency unresolved',
    description: 'A package dependency has no published version matching its range; `errors[].packageId` names it.',
  },
  connection_missing: {
    status: 409,
    title: 'Connection missing',
    description:
      'The agent depends on an integration for which the actor (the end-user of `Service-User`, else the person) has no usable ' +
      'connection: none (`connection_missing`), one that `needs_reconnection`, or one short of the scopes the agent requires (`missing_scopes`). ' +
      'No run was created. `errors[]` has one entry per such integration with `packageId`, `auth_key`, `required_auth_key`, `available_auth_keys`, ' +
      '`candidate_connections`, `required_scopes`, `missing_scopes`, and a fresh single-use hosted link (`connect_url`, `expiresAt`) ' +
      'to connect or reconnect; then launch again. A `run.connection_missing` event is published.',
  },
  email_taken: { status: 409, title: 'Email already registered', description: 'An account with this email address exists.' },
  already_member: { status: 409, title: 'Already a member', description: 'The user already belongs to the organization or space.' },
  last_owner: { status: 409, title: 'Last owner', description: 'An organization keeps at least one owner.' },
  personal_space_takes_no_keys: { status: 409, title: 'Personal space takes no keys', description: 'API keys cannot be created in a personal space.' },
  bootstrap_redeemed: { status: 409, title: 'Bootstrap already redeemed', description: 'The instance already has its first owner.' },
  precondition_failed: { status: 412, title: 'Precondition failed', description: '`If-Match` does not match the current ETag; reload the resource and retry.' },
  payload_too_large: { status: 413, title: 'Payload too large', description: 'The request body exceeds `API_BODY_LIMIT_BYTES`.' },
  file_too_large: {
    status: 413,
    title: 'File too large',
    description: 'The file is larger than `FILE_MAX_BYTES` (100 MiB by default); `detail` names the limit.',
  },
  storage_quota_exceeded: {
    status: 413,
    title: 'Storage quota exceeded',
    description:
      "The organization's files and unexpired uploads, plus this one, would exceed `ORG_STORAGE_QUOTA_BYTES`; `detail` names the " +
      'quota and the bytes in use. Delete files, or let unkept ones expire.',
  },
  archive_too_large: { status: 413, title: 'Archive too large', description: 'The package archive exceeds 10 MiB.' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type', description: 'The route accepts another content type.' },
  preview_unsupported: {
    status: 415,
    title: 'Preview not supported',
    description: 'Only PNG, JPEG, GIF and WebP images, PDF and plain text are previewed inline; download other files from `GET /api/files/{id}/content`.',
  },
  range_not_satisfiable: {
    status: 416,
    title: 'Range not satisfiable',
    description: 'The `Range` asks for bytes past the end of the file; `Content-Range: bytes */<size>` gives its size.',
  },
  precondition_required: { status: 428, title: 'Precondition required', description: 'This update needs `If-Match` with the current ETag (or `*`).' },
  org_run_rate_limited: {
    status: 429,
    title: 'Organization run rate exceeded',
    description: 'The organization launched `per_org_global_rate_per_min` runs in the last minute; wait `retry_after` seconds.',
  },
  org_run_concurrency_exceeded: {
    status: 429,
    title: 'Too many concurrent runs',
    description: 'The organization has `max_concurrent_per_org` pending or running runs; retry when one ends.',
  },
  run_not_cancellable: { status: 409, title: 'Run not cancellable', description: 'The run already reached a terminal status.' },
  schedule_creator_lost_access: {
    status: 409,
    title: 'Schedule creator lost access',
    description:
      'A schedule runs as the person who created it; they no longer hold `agents:run` in its space (or left the organization), ' +
      'so it cannot be enabled. Create a new schedule instead.',
  },
  run_not_terminal: { status: 409, title: 'Run still in progress', description: 'Only finished runs can be deleted; cancel it first.' },
  inline_limit_exceeded: {
    status: 400,
    title: 'Inline run limit exceeded',
    description:
      'The inline run exceeds a limit of `INLINE_RUN_LIMITS` (manifest or prompt size, skills, tools, `authorized_uris` entries ' +
      'or wildcards); `errors[].limit` names it.',
  },
  sink_expired: {
    status: 410,
    title: 'Sink expired',
    description:
      "The remote run's sink expired without a final result; the run has ended. Extend the sink (`PATCH /api/runs/{id}/sink/extend`) before it expires.",
  },
  run_finished: { status: 409, title: 'Run finished', description: 'The run already reached a terminal status; its sink accepts nothing more.' },
  upload_link_gone: {
    status: 410,
    title: 'Upload link gone',
    description: "The upload URL's token is unknown, expired (one hour), or its upload already has its bytes; create a new upload with `POST /api/uploads`.",
  },
  preview_link_invalid: {
    status: 403,
    title: 'Preview link invalid',
    description:
      "The preview link's token is malformed, forged, for another file, or expired (links last five minutes); ask for a new one " +
      'with `POST /api/files/{id}/preview-url`.',
  },
  connect_link_gone: {
    status: 410,
    title: 'Connect link gone',
    description: 'The hosted connect link expired (ten minutes), was already used, or never existed; ask for a new one with `connect/session`.',
  },
  no_model_configured: {
    status: 409,
    title: 'No model configured',
    description:
      'The LLM proxy has no model to call: the organization has no default model (`POST /api/models` with `isDefault: true`), and ' +
      "the instance sets no `MODEL_*` default or does not share it with this organization (it serves the instance owner's organizations " +
      'unless `INSTANCE_MODEL_ORGS=all`).',
  },
  model_provider_mismatch: {
    status: 409,
    title: 'Model provider mismatch',
    description:
      'The LLM proxy route speaks another protocol than the target model: `/api/llm-proxy/v1/chat/completions` needs an `openai-compatible` ' +
      'model, `/api/llm-proxy/v1/messages` an `anthropic` one.',
  },
  model_unreachable: {
    status: 502,
    title: 'Model unreachable',
    description:
      "The LLM proxy could not reach the model's base URL: refused by the egress policy (private address not in `EGRESS_ALLOW_INTERNAL_HOSTS`), " +
      'a connection failure, or a timeout.',
  },
  model_answer_too_large: {
    status: 502,
    title: 'Model answer too large',
    description:
      "The model's answer exceeds `MODEL_MAX_ANSWER_BYTES` (16 MiB by default): nothing of it is returned. A streamed answer already " +
      'under way ends instead with a last `error` event naming the limit.',
  },
  unauthorized_target: {
    status: 403,
    title: 'Unauthorized target',
    description:
      'The credential proxy refused `X-Target`: no auth of the integration lists it in `authorized_uris`, or it resolves to a private, ' +
      'loopback, link-local or reserved address that is not both literal in `authorized_uris` and in `EGRESS_ALLOW_INTERNAL_HOSTS`.',
  },
  invalid_proxy_session: {
    status: 403,
    title: 'Invalid credential-proxy session',
    description:
      '`X-Session-Id` names no live session of this caller in this space: unknown, expired (`CREDENTIAL_PROXY_LIMITS.session_ttl_seconds`), ' +
      'or created by another caller (or for another end-user). Open one with `POST /api/credential-proxy/sessions`.',
  },
  proxy_connection_missing: {
    status: 409,
    title: 'No usable connection',
    description:
      "The session's owner has no usable connection (not `needs_reconnection`) of `X-Integration-Id` whose auth's `authorized_uris` " +
      'match `X-Target`; connect one first.',
  },
  credential_not_deliverable: {
    status: 409,
    title: 'Credential not deliverable',
    description: 'The auth that matches `X-Target` declares no `delivery.http` header, so the proxy cannot inject its credential.',
  },
  provider_unreachable: {
    status: 502,
    title: 'Provider unreachable',
    description:
      "A model provider (or OpenRouter's model list at `OPENROUTER_API_URL`) could not be reached or answered with an error: a " +
      "connection failure, a timeout, the organization's proxy refusing, or an HTTP error; `detail` names what happened and what " +
      'the provider answered.',
  },
  github_unreachable: {
    status: 502,
    title: 'GitHub unreachable',
    description:
      '`POST /api/packages/import-github` could not fetch the repository archive from `GITHUB_CODELOAD_URL`: refused by the egress ' +
      'policy (a private address not in `EGRESS_ALLOW_INTERNAL_HOSTS`), a connection failure, no answer within 30 seconds, a redirect, ' +
      'or an answer other than 200 or 404; `detail` says which.',
  },
  upstream_unreachable: {
    status: 502,
    title: 'Upstream unreachable',
    description: 'The credential proxy could not reach `X-Target`: a connection failure, a TLS error, or no answer within 30 seconds.',
  },
  upstream_response_too_large: {
    status: 502,
    title: 'Upstream response too large',
    description: "The target's answer exceeds `CREDENTIAL_PROXY_LIMITS.max_response_bytes`; nothing of it is returned.",
  },
  not_implemented: { status: 501, title: 'Not implemented', description: 'This instance cannot do this yet, e.g. the hosted form of an OAuth 2 auth.' },
  upstream_response_withheld: {
    status: 502,
    title: 'Upstream response withheld',
    description:
      'The target answered in a form that cannot be searched for echoed credentials (compressed although asked for identity), or ' +
      'a binary body containing the credential: it is not passed on.',
  },
  rate_limited: { status: 429, title: 'Too many requests', description: 'The per-route limit for this identity is exhausted; wait `retry_after` seconds.' },
  internal_error: { status: 500, title: 'Internal error', description: 'The server failed; the request id identifies it in the logs.' },
  credential_change_revocation_failed: {
    status: 500,
    title: 'Credential change not applied',
    description:
      "Changing or resetting a password revokes the account's OAuth refresh tokens, grants and device codes; that failed, so the " +
      'password was not changed. Try again.',
  },
  service_unavailable: { status: 503, title: 'Service unavailable', description: 'A dependency (Postgres or Temporal) is unreachable.' },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface ProblemFieldError {
  field: string;
  code: string;
  message: string;
  [extra: string]: unknown;
}

export interface ProblemOptions {
  detail?: string;
  param?: string;
  errors?: ProblemFieldError[];
  retryAfter?: number;
  headers?: Record<string, string>;
}

export class ProblemError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly param?: string;
  readonly errors?: ProblemFieldError[];
  readonly retryAfter?: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, opts: ProblemOptions = {}) {
    const entry: ErrorEntry = ERROR_CATALOG[code];
    super(opts.detail ?? entry.title);
    this.name = 'ProblemError';
    this.code = code;
    this.status = entry.status;
    this.title = entry.title;
    this.detail = opts.detail ?? entry.description;
    this.param = opts.param;
    this.errors = opts.errors;
    this.retryAfter = opts.retryAfter;
    this.headers = opts.headers ?? {};
  }
}

/** Shorthand: `throw problem('not_found', {detail: 'No such run'})`. */
export function problem(code: ErrorCode, opts: ProblemOptions | string = {}): ProblemError {
  return new ProblemError(code, typeof opts === 'string' ? { detail: opts } : opts);
}

export function kebab(code: string): string {
  return code.replace(/_/g, '-');
}
