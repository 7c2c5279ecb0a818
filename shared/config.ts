// Every environment variable the service reads is read here, validated once at boot, and
// documented in the README's configuration table. Anything invalid stops the boot with a
// message that names the variable (and the key, for the JSON settings).
import os from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { type ModuleName, OPTIONAL_MODULES } from './modules.ts';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const MiB = 1024 * 1024;

/** SANDBOX_MODE: `bwrap` (required) or `process` (no isolation). */
export type SandboxSetting = 'bwrap' | 'process';
/** SANDBOX_LIMITS: `required` (agents that run commands need cgroup ceilings) or `none`. */
export type SandboxLimitsSetting = 'required' | 'none';

/** SPEC 8.3: PLATFORM_RUN_LIMITS. */
export interface PlatformRunLimits {
  timeout_ceiling_seconds: number;
  per_org_global_rate_per_min: number;
  max_concurrent_per_org: number;
  agent_memory_ceiling_mb: number;
  agent_cpu_ceiling: number;
  /** DESIGN.md 9: the run cgroup's pids.max (processes and threads of the sandbox). */
  agent_pids_ceiling: number;
  /** DESIGN.md 9: MiB an agent that runs code may write in its /workspace, output/ included. */
  agent_disk_ceiling_mb: number;
}
/** SPEC 8.4: INLINE_RUN_LIMITS. */
export interface InlineRunLimits {
  rate_per_min: number;
  manifest_bytes: number;
  prompt_bytes: number;
  max_skills: number;
  max_tools: number;
  max_authorized_uris: number;
  wildcard_uri_allowed: boolean;
  retention_days: number;
}
/** SPEC 8.5: LLM_PROXY_LIMITS. */
export interface LlmProxyLimits {
  rate_per_min: number;
  max_request_bytes: number;
}
/** SPEC 8.5: CREDENTIAL_PROXY_LIMITS. */
export interface CredentialProxyLimits {
  rate_per_min: number;
  max_request_bytes: number;
  max_response_bytes: number;
  session_ttl_seconds: number;
}

export const PLATFORM_RUN_LIMITS_DEFAULTS: PlatformRunLimits = {
  timeout_ceiling_seconds: 1800,
  per_org_global_rate_per_min: 200,
  max_concurrent_per_org: 50,
  agent_memory_ceiling_mb: 1536,
  agent_cpu_ceiling: 2,
  agent_pids_ceiling: 256,
  agent_disk_ceiling_mb: 512,
};

const jsonSettings = {
  PLATFORM_RUN_LIMITS: {
    defaults: PLATFORM_RUN_LIMITS_DEFAULTS,
    types: {
      timeout_ceiling_seconds: 'posint',
      per_org_global_rate_per_min: 'posint',
      max_concurrent_per_org: 'posint',
      agent_memory_ceiling_mb: 'posint',
      agent_cpu_ceiling: 'posnumber',
      agent_pids_ceiling: 'posint',
      agent_disk_ceiling_mb: 'posint',
    },
  },
  INLINE_RUN_LIMITS: {
    defaults: {
      rate_per_min: 60,
      manifest_bytes: 65536,
      prompt_bytes: 200000,
      max_skills: 20,
      max_tools: 20,
      max_authorized_uris: 50,
      wildcard_uri_allowed: false,
      retention_days: 30,
    } satisfies InlineRunLimits,
    types: {
      rate_per_min: 'posint',
      manifest_bytes: 'posint',
      prompt_bytes: 'posint',
      max_skills: 'nonneg',
      max_tools: 'nonneg',
      max_authorized_uris: 'nonneg',
      wildcard_uri_allowed: 'boolean',
      retention_days: 'posint',
    },
  },
  LLM_PROXY_LIMITS: {
    defaults: { rate_per_min: 60, max_request_bytes: 10 * MiB } satisfies LlmProxyLimits,
    types: { rate_per_min: 'posint', max_request_bytes: 'posint' },
  },
  CREDENTIAL_PROXY_LIMITS: {
    defaults: {
      rate_per_min: 100,
      max_request_bytes: 10 * MiB,
      max_response_bytes: 50 * MiB,
      session_ttl_seconds: 3600,
    } satisfies CredentialProxyLimits,
    types: {
      rate_per_min: 'posint',
      max_request_bytes: 'posint',
      max_response_bytes: 'posint',
      session_ttl_seconds: 'posint',
    },
  },
} as const;

const typeSchemas = {
  posint: { type: 'integer', minimum: 1 },
  nonneg: { type: 'integer', minimum: 0 },
  posnumber: { type: 'number', exclusiveMinimum: 0 },
  boolean: { type: 'boolean' },
} as const;

const ajv = new Ajv({ allErrors: false, strict: true });

function parseJsonSetting<K extends keyof typeof jsonSettings>(name: K, raw: string | undefined): (typeof jsonSettings)[K]['defaults'] {
  const { defaults, types } = jsonSettings[name];
  if (raw === undefined || raw.trim() === '') return { ...defaults };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new ConfigError(`${name} is not valid JSON: ${(err as Error).message}`);
  }
  const schema = {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(Object.entries(types).map(([k, t]) => [k, typeSchemas[t]])),
  };
  const validate = ajv.compile(schema);
  if (!validate(value)) {
    const e = validate.errors![0];
    if (e.keyword === 'additionalProperties') {
      throw new ConfigError(`${name} has an unknown key "${e.params.additionalProperty}"`);
    }
    const key = e.instancePath.replace(/^\//, '') || '(root)';
    throw new ConfigError(`${name}.${key} ${e.message}`);
  }
  return { ...defaults, ...(value as object) };
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) {
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return Number(raw);
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!values.includes(raw as T)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

function list(env: NodeJS.ProcessEnv, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** MODULES: the optional modules that run (shared/modules.ts); all of them by default, none when empty. */
function modules(env: NodeJS.ProcessEnv): ReadonlySet<ModuleName> {
  if (env.MODULES === undefined) return new Set(OPTIONAL_MODULES);
  const named = list(env, 'MODULES');
  const unknown = named.filter((m) => !(OPTIONAL_MODULES as readonly string[]).includes(m));
  if (unknown.length) throw new ConfigError(`MODULES names unknown modules (${unknown.join(', ')}); the optional modules are ${OPTIONAL_MODULES.join(', ')}`);
  return new Set(named as ModuleName[]);
}

function url(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  try {
    new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
  return raw;
}

function secretsKey(env: NodeJS.ProcessEnv): Buffer | undefined {
  const raw = env.SECRETS_KEY;
  if (!raw) return undefined;
  const key = Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError('SECRETS_KEY must be the base64 of exactly 32 bytes');
  return key;
}

function defaultModel(env: NodeJS.ProcessEnv) {
  const provider = oneOf(env, 'MODEL_PROVIDER', ['openai-compatible', 'anthropic'], 'openai-compatible');
  const baseUrl = url(env, 'MODEL_BASE_URL');
  const model = env.MODEL_NAME || undefined;
  if (!baseUrl && !model) return undefined;
  if (!baseUrl || !model) throw new ConfigError('MODEL_BASE_URL and MODEL_NAME are set together');
  return { provider, baseUrl: baseUrl.replace(/\/$/, ''), model, apiKey: env.MODEL_API_KEY || undefined };
}

/**
 * SMTP_URL and MAIL_FROM (shared/mail/README.md). SMTP_URL may carry credentials: no message
 * here repeats it.
 */
function mailSettings(env: NodeJS.ProcessEnv): { smtpUrl: string; from: string } | undefined {
  const smtpUrl = env.SMTP_URL || undefined;
  if (!smtpUrl) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(smtpUrl);
  } catch {}
  if (!parsed || !['smtp:', 'smtps:'].includes(parsed.protocol) || !parsed.hostname) {
    throw new ConfigError(
      'SMTP_URL must be an smtp:// or smtps:// URL such as smtps://user:password@mail.example.com:465 (its value is not shown: it may hold a password)',
    );
  }
  const from = env.MAIL_FROM?.trim();
  if (!from) throw new ConfigError('MAIL_FROM is required with SMTP_URL: the sender address, e.g. "Agents <no-reply@example.com>"');
  const address = /<([^<>]*)>$/.exec(from)?.[1] ?? from;
  if (!/^[^\s@<>"]+@[^\s@<>"]+$/.test(address)) throw new ConfigError(`MAIL_FROM must be an address or "Name <address>", got "${from}"`);
  return { smtpUrl, from };
}

function s3Settings(env: NodeJS.ProcessEnv) {
  const endpoint = url(env, 'S3_ENDPOINT');
  const bucket = env.S3_BUCKET || undefined;
  const accessKeyId = env.S3_ACCESS_KEY_ID || env.AWS_ACCESS_KEY_ID || undefined;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY || env.AWS_SECRET_ACCESS_KEY || undefined;
  if (!endpoint && !bucket) return undefined;
  if (!endpoint || !bucket || !accessKeyId || !secretAccessKey) {
    throw new ConfigError('S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together (or none of them)');
  }
  return { endpoint, bucket, accessKeyId, secretAccessKey, region: env.S3_REGION || 'us-east-1' };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const platformRunLimits = parseJsonSetting('PLATFORM_RUN_LIMITS', env.PLATFORM_RUN_LIMITS) as PlatformRunLimits;
  const port = int(env, 'PORT', 3000);
  const trustedOrigins = list(env, 'TRUSTED_ORIGINS');
  for (const o of trustedOrigins) {
    if (!/^https?:\/\/[^/]+$/.test(o)) throw new ConfigError(`TRUSTED_ORIGINS entry "${o}" must be an origin such as https://app.example.com`);
  }
  return {
    /** `production` turns on the per-IP limits of the sign-in routes (SPEC 5.4). */
    nodeEnv: env.NODE_ENV ?? 'development',
    /** Address the API binds to. */
    host: env.HOST || '0.0.0.0',
    /** API port; `0` picks a free one. */
    port,
    /** Public base URL, used for links, problem `type` URIs and cookies' Secure flag. */
    publicUrl: (url(env, 'PUBLIC_URL') ?? `http://localhost:${port}`).replace(/\/$/, ''),
    /** Everything the embedded defaults write lives here. */
    dataDir: path.resolve(env.DATA_DIR || '.data'),
    /** External Postgres; unset = embedded Postgres under DATA_DIR. */
    databaseUrl: url(env, 'DATABASE_URL'),
    /** Preferred port of the embedded Postgres; a busy port falls back to a free one. */
    pgPort: int(env, 'PG_PORT', 5432),
    /** External Temporal frontend (host:port); unset = `temporal server start-dev`. */
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    /** Preferred ports of the embedded Temporal dev server and its UI. */
    temporalPort: int(env, 'TEMPORAL_PORT', 7233),
    temporalUiPort: int(env, 'TEMPORAL_UI_PORT', 8233),
    /** Printed at start when Temporal is external. */
    temporalUiUrl: url(env, 'TEMPORAL_UI_URL'),
    temporalCliPath: env.TEMPORAL_CLI_PATH || undefined,
    /** TLS / API key towards a Temporal cluster or Temporal Cloud. */
    temporalTls: oneOf(env, 'TEMPORAL_TLS', ['true', 'false'], 'false') === 'true',
    temporalTlsCertPath: env.TEMPORAL_TLS_CERT || undefined,
    temporalTlsKeyPath: env.TEMPORAL_TLS_KEY || undefined,
    temporalApiKey: env.TEMPORAL_API_KEY || undefined,
    /** Shared rate-limit counters (and, later, idempotency keys) across API replicas. */
    redisUrl: url(env, 'REDIS_URL'),
    /** Browser origins allowed by CORS. */
    trustedOrigins,
    /** Number of proxies whose X-Forwarded-For entries are trusted. */
    trustProxy: int(env, 'TRUST_PROXY', 0),
    apiBodyLimitBytes: int(env, 'API_BODY_LIMIT_BYTES', 10 * MiB, 1),
    /** `open` lets anyone sign up; `closed` leaves only bootstrap and org invitations. */
    authSignup: oneOf(env, 'AUTH_SIGNUP', ['open', 'closed'], 'open'),
    /** Fixed bootstrap token; otherwise one is generated on an empty database. */
    bootstrapToken: env.BOOTSTRAP_TOKEN || undefined,
    /** base64 of 32 bytes: encrypts secrets at rest (model keys, later credentials). npm start generates one under DATA_DIR. */
    secretsKey: secretsKey(env),
    /** Extra trusted CAs (PEM file) for outbound TLS, on top of Node's default store. */
    extraCaCertsPath: env.NODE_EXTRA_CA_CERTS || undefined,
    /** Hosts that may resolve to private addresses for outbound calls (models, webhooks, integrations). */
    egressAllowInternalHosts: list(env, 'EGRESS_ALLOW_INTERNAL_HOSTS').map((h) => h.toLowerCase()),
    /** The optional modules that run (SPEC 1): `webhooks,oidc,mcp,chat` by default. */
    modules: modules(env),
    /** GitHub REST API; `POST /api/packages/import-github` asks it whether a repository exists. Default https://api.github.com. */
    githubApiUrl: (url(env, 'GITHUB_API_URL') ?? 'https://api.github.com').replace(/\/+$/, ''),
    /** Where `import-github` downloads repository zips (`<this>/<owner>/<repo>/zip/<ref>`). Default https://codeload.github.com. */
    githubCodeloadUrl: (url(env, 'GITHUB_CODELOAD_URL') ?? 'https://codeload.github.com').replace(/\/+$/, ''),
    /** Instance default model, used when an organization has none (DESIGN.md section 5). */
    defaultModel: defaultModel(env),
    /** Whom the instance model serves: `owner` (the organizations the instance owner created and owns) or `all` (DESIGN.md 5). */
    instanceModelOrgs: oneOf(env, 'INSTANCE_MODEL_ORGS', ['owner', 'all'], 'owner'),
    /** Outgoing mail (password reset): SMTP_URL and MAIL_FROM; unset = mail waits sealed in the outbox. */
    mail: mailSettings(env),
    /** Base URL of OpenRouter's public API; `GET /api/models/openrouter` lists `<this>/models`. */
    openrouterApiUrl: (url(env, 'OPENROUTER_API_URL') ?? 'https://openrouter.ai/api/v1').replace(/\/+$/, ''),
    /** `npm start`: `file` writes API and worker output to `$DATA_DIR/logs/{api,worker}.log`; `json` leaves their JSON lines on stdout. */
    logFormat: oneOf(env, 'LOG_FORMAT', ['file', 'json'], 'file'),
    logLevel: oneOf(env, 'LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], 'info'),
    /** `GET /metrics` (API and worker) answers only `Authorization: Bearer <this>` when set; unset = loopback clients only (DESIGN.md 8). */
    metricsToken: env.METRICS_TOKEN || undefined,
    /** The worker's own `GET /metrics` server (on HOST); unset = none, 0 = any free port. */
    workerMetricsPort: env.WORKER_METRICS_PORT ? int(env, 'WORKER_METRICS_PORT', 0) : undefined,
    /** OpenTelemetry traces over OTLP/HTTP when set (the standard OTEL_* variables apply); unset = off. */
    otlpEndpoint: url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'),
    /** A run fails after losing this many workers (missed heartbeats); until then it resumes from its checkpoint on another worker. */
    runMaxWorkerLosses: int(env, 'RUN_MAX_WORKER_LOSSES', 3, 1),
    /** `false` stops journaling runs (a little less database work per step): a lost worker then fails its run. */
    runCheckpoints: oneOf(env, 'RUN_CHECKPOINTS', ['true', 'false'], 'true') === 'true',
    /** SPEC 8.5: the largest durable file (uploads, run inputs and outputs). */
    fileMaxBytes: int(env, 'FILE_MAX_BYTES', 100 * MiB, 1),
    /** SPEC 8.5: bytes an organization may keep in files and uploads; unset = no quota. */
    orgStorageQuotaBytes: env.ORG_STORAGE_QUOTA_BYTES ? int(env, 'ORG_STORAGE_QUOTA_BYTES', 0, 1) : undefined,
    /** How often the `sweep-expired-files` Temporal Schedule deletes expired files and lapsed uploads. */
    fileSweepIntervalSeconds: int(env, 'FILE_SWEEP_INTERVAL_SECONDS', 3600, 1),
    /** S3-compatible object storage for files (all of endpoint, bucket and keys); unset = `$DATA_DIR/files`. */
    s3: s3Settings(env),
    platformRunLimits,
    /**
     * Agent runs one worker executes at once (DESIGN.md 8): by default as many sandboxes as the
     * machine's memory holds at `agent_memory_ceiling_mb`, at least one. Runs beyond wait `pending`.
     */
    workerMaxConcurrentRuns: int(
      env,
      'WORKER_MAX_CONCURRENT_RUNS',
      Math.max(1, Math.floor(os.totalmem() / (platformRunLimits.agent_memory_ceiling_mb * 1024 * 1024))),
      1,
    ),
    /**
     * Sandboxes a worker keeps started and waiting for a run (activities/sandbox/pool.ts), so a
     * run skips the sandbox's start-up; each serves one run and is destroyed, and a run taking
     * one starts its replacement. 0 = none. At most WORKER_MAX_CONCURRENT_RUNS; a waiting one
     * holds about 60 MB resident (about 20 MB not shared with other node processes).
     */
    sandboxWarmPool: int(env, 'SANDBOX_WARM_POOL', 2, 0),
    /**
     * How agents are isolated (DESIGN.md 3): `bwrap` requires bwrap, and without it runs refuse to
     * start; `process` runs every agent without isolation, with a warning at start and on each run.
     */
    sandboxMode: oneOf<SandboxSetting>(env, 'SANDBOX_MODE', ['bwrap', 'process'], 'bwrap'),
    /**
     * DESIGN.md 9: `required` refuses runs of agents that run commands (`bash`) on a worker that
     * cannot hold them to memory, CPU and pids ceilings (no writable cgroups); `none` runs them.
     */
    sandboxLimits: oneOf<SandboxLimitsSetting>(env, 'SANDBOX_LIMITS', ['required', 'none'], 'required'),
    inlineRunLimits: parseJsonSetting('INLINE_RUN_LIMITS', env.INLINE_RUN_LIMITS) as InlineRunLimits,
    llmProxyLimits: parseJsonSetting('LLM_PROXY_LIMITS', env.LLM_PROXY_LIMITS) as LlmProxyLimits,
    credentialProxyLimits: parseJsonSetting('CREDENTIAL_PROXY_LIMITS', env.CREDENTIAL_PROXY_LIMITS) as CredentialProxyLimits,
    /** Bytes one model answer may have (runs, chat turns, the LLM proxy; streamed or not): past it the call fails naming this setting. */
    modelMaxAnswerBytes: int(env, 'MODEL_MAX_ANSWER_BYTES', 16 * MiB, 1),
    /** Open realtime streams one identity (API key, session user, end-user) may hold, per API process (DESIGN.md 5). */
    realtimeMaxStreamsPerIdentity: int(env, 'REALTIME_MAX_STREAMS_PER_IDENTITY', 100, 1),
  };
}

export type Config = ReturnType<typeof loadConfig>;

/**
 * Configuration of a service process (API or worker) run on its own: the embedded defaults do
 * not apply there, so Postgres, Temporal and the secrets key must be named. Exits with a message
 * naming what is wrong.
 */
export function loadServiceConfig(role: 'API' | 'worker'): Config & { databaseUrl: string; temporalAddress: string; secretsKey: Buffer } {
  try {
    const config = loadConfig();
    if (!config.databaseUrl || !config.temporalAddress || !config.secretsKey) {
      throw new ConfigError(`DATABASE_URL, TEMPORAL_ADDRESS and SECRETS_KEY are required to run the ${role} on its own; \`npm start\` sets them`);
    }
    return config as Config & { databaseUrl: string; temporalAddress: string; secretsKey: Buffer };
  } catch (err) {
    console.error(`configuration error: ${(err as Error).message}`);
    process.exit(1);
  }
}
