// Run rows and their wire shape (DESIGN.md section 5, "Runs").
import type { Knex } from 'knex';

export const RUN_STATUSES = ['pending', 'running', 'success', 'failed', 'timeout', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set(['success', 'failed', 'timeout', 'cancelled']);
export const LIVE_STATUSES: readonly RunStatus[] = ['pending', 'running'];

export function isTerminal(status: string): boolean {
  return TERMINAL_STATUSES.has(status as RunStatus);
}

export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** Who owns a run, an upload or a file, and where: the columns visibility rules read. */
export type OwnerColumns = Pick<RunRow, 'org_id' | 'space_id' | 'actor_type' | 'actor_id' | 'user_id' | 'end_user_id'>;

export interface RunRow {
  id: string;
  org_id: string;
  space_id: string;
  package_id: string;
  package_version: string;
  status: RunStatus;
  input: Record<string, unknown>;
  result: { output: unknown } | null;
  error: string | null;
  actor_type: 'user' | 'api_key' | 'end_user' | 'schedule';
  actor_id: string;
  user_id: string | null;
  end_user_id: string | null;
  schedule_id: string | null;
  timeout_seconds: number;
  sandbox_mode: string | null;
  executor: 'sandbox' | 'remote';
  sink_secret_hash: string | null;
  sink_expires_at: Date | null;
  usage: RunUsage;
  /** The connection chosen at launch per integration dependency: {<integration id>: <conn id>} (migration 010). */
  connections: Record<string, string>;
  log_seq: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  /** Joined from packages: '@scope/name'. */
  package_full_name?: string;
}

/** Run columns plus the package's '@scope/name' parts (and whether it is an inline package). */
export const RUN_SELECT = ['r.*', 'p.scope', 'p.name', 'p.ephemeral'] as const;

/** Runs (`r`) joined to their package (`p`): every run read starts here. */
export function runsWithPackage(knex: Knex): Knex.QueryBuilder {
  return knex('runs as r').join('packages as p', 'p.id', 'r.package_id');
}

/**
 * The run's usage as real clients read it (DESIGN.md 5): Appstrate's CLI and GitHub Action show
 * `tokenUsage` and `cost`, and print nothing for a run that made no model call (null then).
 */
export function clientUsage(usage: RunUsage): { tokenUsage: { input_tokens: number; output_tokens: number } | null; cost: number | null } {
  const none = usage.inputTokens === 0 && usage.outputTokens === 0 && usage.costUsd === 0;
  return none ? { tokenUsage: null, cost: null } : { tokenUsage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens }, cost: usage.costUsd };
}

export function runDto(row: RunRow & { scope?: string; name?: string }) {
  // null, not 0, for a run that never started: a client tells "never ran" from "instant".
  const duration = row.started_at && row.finished_at ? row.finished_at.getTime() - row.started_at.getTime() : null;
  return {
    object: 'run' as const,
    id: row.id,
    packageId: row.scope && row.name ? `${row.scope}/${row.name}` : row.package_full_name,
    version: row.package_version,
    status: row.status,
    input: row.input,
    result: row.result,
    error: row.error,
    spaceId: row.space_id,
    actor: { type: row.actor_type, id: row.actor_id },
    endUserId: row.end_user_id,
    scheduleId: row.schedule_id,
    createdAt: row.created_at.toISOString(),
    startedAt: row.started_at?.toISOString() ?? null,
    finishedAt: row.finished_at?.toISOString() ?? null,
    duration,
    timeoutSeconds: row.timeout_seconds,
    sandboxMode: row.sandbox_mode,
    sinkExpiresAt: row.sink_expires_at?.toISOString() ?? null,
    usage: row.usage,
    ...clientUsage(row.usage),
  };
}

export const runSchema = {
  type: 'object',
  required: ['object', 'id', 'packageId', 'version', 'status', 'input', 'result', 'error', 'createdAt', 'usage', 'tokenUsage', 'cost'],
  properties: {
    object: { const: 'run' },
    id: { type: 'string', pattern: '^run_' },
    packageId: { type: 'string' },
    version: { type: 'string' },
    status: { enum: [...RUN_STATUSES] },
    input: { type: 'object' },
    result: { type: ['object', 'null'], properties: { output: {} } },
    error: { type: ['string', 'null'] },
    spaceId: { type: 'string' },
    actor: { type: 'object', properties: { type: { type: 'string' }, id: { type: 'string' } } },
    endUserId: { type: ['string', 'null'] },
    scheduleId: { type: ['string', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
    startedAt: { type: ['string', 'null'], format: 'date-time' },
    finishedAt: { type: ['string', 'null'], format: 'date-time' },
    duration: {
      type: ['integer', 'null'],
      description:
        'Milliseconds from startedAt to finishedAt. null until the run finishes, and for a run that never started (startedAt null, ' +
        'e.g. cancelled while pending).',
    },
    timeoutSeconds: { type: 'integer' },
    sandboxMode: {
      type: ['string', 'null'],
      description: 'How the run was isolated: bwrap+cgroup-v1|bwrap+cgroup-v2|bwrap|process, or `remote` (executed by a runner outside the service)',
    },
    sinkExpiresAt: { type: ['string', 'null'], format: 'date-time', description: 'Remote runs: when the sink stops accepting reports unless extended' },
    usage: {
      type: 'object',
      properties: { inputTokens: { type: 'integer' }, outputTokens: { type: 'integer' }, costUsd: { type: 'number' } },
    },
    tokenUsage: {
      type: ['object', 'null'],
      required: ['input_tokens', 'output_tokens'],
      properties: { input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' } },
      description: "`usage`'s token counts as clients of this interface read them; null while the run has made no model call",
    },
    cost: { type: ['number', 'null'], description: '`usage.costUsd` (USD); null while the run has made no model call' },
  },
};
