// Every workflow a starter (temporal/starters/) starts, as its callers see it: its input, its
// result and its signature, declared once here so that starters type their starts without loading
// workflow code (a type import of a workflow tied starters, and the shared code and activities
// that call them, into a cycle with the workflow's activities). Each workflow is checked against
// its signature, under the name the starters start it by, in test/unit/temporal-contract.test.ts.
// Types only: nothing here reaches the workflow bundle.
import type { ConnectionOwner } from '../../shared/integrations/connections.ts';

// Runs (queue agent-runs, but bulkRuns on platform).

export interface RunAgentInput {
  runId: string;
  timeoutSeconds: number;
  /** The run's organization: the fairness key of its sandbox slot (runs launched before it was passed have none). */
  orgId?: string;
}
/** Answers the run's terminal status. */
export type RunAgentWorkflow = (input: RunAgentInput) => Promise<string>;

export interface RemoteRunInput {
  runId: string;
  timeoutSeconds: number;
  /** ISO 8601: when the sink expires unless extended. */
  sinkExpiresAt: string;
}
/** Answers the run's terminal status. */
export type RemoteRunWorkflow = (input: RemoteRunInput) => Promise<string>;

export interface ScheduledRunInput {
  scheduleId: string;
}
/** The run id of this tick, or null when none was due (schedule disabled or deleted). */
export type ScheduledRunWorkflow = (input: ScheduledRunInput) => Promise<string | null>;

export interface BulkRunsInput {
  jobId: string;
  /** Carried over a continue-as-new: time already spent waiting on the run limits. */
  waitedMs?: number;
}
export type BulkRunsWorkflow = (input: BulkRunsInput) => Promise<void>;

export interface PurgeInlinePackageInput {
  packageId: string;
  retentionDays: number;
}
export type PurgeInlinePackageWorkflow = (input: PurgeInlinePackageInput) => Promise<'purged' | 'gone'>;

// Chat (module chat, queue agent-runs).

export interface ChatSessionInput {
  sessionId: string;
  /** Each turn's ceiling (the agent's timeout, clamped). */
  turnTimeoutSeconds: number;
  /** The session's organization: the fairness key of its turns' sandbox slots. */
  orgId?: string;
}
export type ChatSessionWorkflow = (input: ChatSessionInput) => Promise<void>;

// Webhooks (module webhooks, queue platform).

export interface DeliverWebhookInput {
  eventId: string;
  webhookId: string;
  /** test.ping and replays: one attempt, never retried. */
  single?: boolean;
  /** The number of the first attempt (a replay continues after the recorded ones); 1 by default. */
  firstAttempt?: number;
  /**
   * The ladder continued from attempt `firstAttempt` (the earlier ones made by the outbox): its
   * first attempt waits until this time (epoch ms), and the ladder's position is the attempt
   * number. Absent for deliveries that begin here (and for every one begun before the outbox).
   */
  continueAt?: number;
}
/** Answers how the delivery ended: `success`, `permanent`, `gone`, `abandoned`, `failed` (a single attempt) or `exhausted`. */
export type DeliverWebhookWorkflow = (input: DeliverWebhookInput) => Promise<string>;

export interface WebhookOutboxInput {
  webhookId: string;
  /** Events carried over from the previous run (continue-as-new). */
  pending?: string[];
  /** Events carried over that wait until their time (epoch ms; the `deliver` signal's `notBefore`). */
  deferred?: Record<string, number>;
}
export type WebhookOutboxWorkflow = (input: WebhookOutboxInput) => Promise<void>;

// Integrations and files (queue platform).

/** What a connect attempt's workflow carries: ids and names, never a field value. */
export interface ConnectLoginInput {
  attemptId: string;
  orgId: string;
  spaceId: string;
  owner: ConnectionOwner;
  integrationPackageRowId: string;
  authKey: string;
  connectionId?: string;
  scopes: string[];
}
export type ConnectLoginResult = { ok: true; connectionId: string; created: boolean } | { ok: false; detail: string };
export type ConnectLoginWorkflow = (input: ConnectLoginInput) => Promise<ConnectLoginResult>;

export interface RefreshConnectionInput {
  connectionId: string;
  orgId: string;
}
/** Answers why it stopped. */
export type RefreshConnectionWorkflow = (input: RefreshConnectionInput) => Promise<string>;

export interface SweepExpiredFilesInput {
  /** Rows per batch (the activity's SWEEP_BATCH when absent). */
  limit?: number;
}
/** Answers what it deleted. */
export type SweepExpiredFilesWorkflow = (input?: SweepExpiredFilesInput) => Promise<{ files: number; uploads: number }>;
