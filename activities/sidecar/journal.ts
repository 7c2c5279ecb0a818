// The run's journal (DESIGN.md section 8). The runtime is deterministic: given the same answers
// it asks the same questions in the same order. The sidecar records each answer (a model
// completion, a tool result) together with its effects (usage, log lines, notes) in one
// statement; an attempt on another worker starts a fresh runtime and the journal answers every
// question it already holds, so no completed model call is sent again and no effect is written
// twice. Only calls cut off by the loss itself are made again.
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { USAGE_PLUS_CALL } from '../../shared/models/usage.ts';
import { RUN_EVENTS_CHANNEL, runEventNotifySql } from '../../shared/runs/events.ts';
import { type LogEntryInput, MAX_LOG_MESSAGE } from '../../shared/runs/logs.ts';
import type { RunUsage } from '../../shared/runs/model.ts';

/**
 * `program`: a call a program in the sandbox made while a command ran (`api-call`, DESIGN.md 9).
 * Programs need not ask in the runtime's order (a command that ran again may ask other things),
 * so their steps are answered by request (a key naming the command and the call's ordinal in it,
 * with the call itself), wherever they are in the journal, and the runtime's own steps pass them by.
 */
export type StepKind = 'model' | 'tool' | 'program';

interface Step {
  seq: number;
  /** The attempt that recorded it. */
  attempt: number;
  kind: StepKind;
  name: string;
  requestHash: string;
  response: unknown;
  /** A program step this attempt was answered from already. */
  answered?: boolean;
}

/** When a step began (migration 028; a model call's usage is kept from its effects). */
export interface StepTiming {
  startedAt?: Date;
}

/**
 * What a step writes with itself, in the same statement: a resumed run neither loses nor repeats
 * it. Data, not callbacks, so that the step and its effects are one round trip to Postgres (they
 * were a transaction of four to six: BEGIN, each effect, the step, COMMIT).
 */
export interface StepEffects {
  /** Log lines, in order: each takes the run's next sequence number and is announced as `appendRunLog` announces. */
  logs?: LogEntryInput[];
  /** Agent memory (notes, pins) kept for the run's agent and actor. */
  memory?: { packageId: string; actorKey: string; items: Array<{ kind: string; content: string }> };
  /** A model call's usage, added to the run's totals and announced (`usage` event), and kept with the step. */
  usage?: RunUsage;
}

/**
 * The step, its effects and their announcements in one statement. The runs row is updated only
 * when there is something to add to it (log sequence numbers, usage); `keep` false (RUN_CHECKPOINTS
 * off) writes the effects without the step. Payloads as `runEventPayload`'s (shared/runs/events.ts).
 */
const WRITE_STEP = `with live as (
    select id from runs where id = :runId and live_attempt <= :attempt for share
  ), run as (
    update runs set
      log_seq = log_seq + :logCount,
      usage = case when :withUsage then ${USAGE_PLUS_CALL} else usage end
    where id = :runId and (:logCount > 0 or :withUsage) and exists (select from live)
    returning log_seq, org_id, space_id
  ), entries as (
    select run.log_seq - :logCount + e.i as seq, run.org_id, run.space_id, e.v
      from run, jsonb_array_elements(cast(:logs as jsonb)) with ordinality as e(v, i)
  ), logged as (
    insert into run_logs (run_id, seq, level, type, message, data)
    select :runId, seq, v->>'level', v->>'type', v->>'message', v->'data' from entries
  ), remembered as (
    insert into agent_memory (org_id, package_id, actor_key, run_id, kind, content)
    select (select org_id from runs where id = :runId), :packageId, :actorKey, :runId, m->>'kind', m->>'content'
      from jsonb_array_elements(cast(:memory as jsonb)) as m where exists (select from live)
  ), step as (
    insert into run_steps (run_id, seq, kind, name, request_hash, response, attempt, started_at, usage)
    select :runId, :seq, :kind, :name, :requestHash, cast(:response as jsonb), :attempt, :startedAt, cast(:stepUsage as jsonb)
    where :keep and exists (select from live)
  )
  select ${runEventNotifySql(':channel', 'log', 'cast(:runId as text)', { seq: 'seq' })}, true as live from entries
  union all
  select ${runEventNotifySql(':channel', 'usage', 'cast(:runId as text)')}, true from run where :withUsage
  union all
  select null, false where not exists (select from live)`;

/**
 * Makes `attempt` the run's live attempt (the fence WRITE_STEP checks), unless a later one holds
 * it already; the live attempt it leaves. Waits for a step being written by an earlier attempt, so
 * the journal read after it holds every step that attempt will ever write.
 */
const TAKE_RUN = `update runs set live_attempt = greatest(live_attempt, :attempt) where id = :runId returning live_attempt`;

/** The checkpoint no longer matches what the runtime asks: resuming would change the run. */
export class JournalMismatch extends Error {}

/**
 * Another attempt of the run took it (TAKE_RUN) or recorded this step first: Temporal gave the run
 * to it while this attempt's worker stopped responding (DESIGN.md section 8). This attempt is
 * superseded and must end without writing to the run; the live one goes on from the journal.
 */
export class AttemptSuperseded extends Error {}

/** Postgres unique_violation: the step's (run_id, seq) is taken. */
const UNIQUE_VIOLATION = '23505';

function digest(request: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(request ?? null))
    .digest('hex');
}

export class RunJournal {
  private readonly knex: Knex;
  private readonly runId: string;
  private readonly attempt: number;
  private readonly steps: Step[];
  /** False when RUN_CHECKPOINTS is off: effects are written, answers are not kept. */
  private readonly keep: boolean;
  /** The runtime's next step in `steps`. */
  private next = 0;
  /** The seq of the last step written: new ones follow every recorded one. */
  private written: number;

  private constructor(knex: Knex, runId: string, attempt: number, steps: Step[], keep: boolean) {
    this.knex = knex;
    this.runId = runId;
    this.attempt = attempt;
    this.steps = steps;
    this.keep = keep;
    this.written = steps.length;
  }

  /**
   * The journal as this attempt resumes it. A retried attempt first takes the run from the earlier
   * ones (TAKE_RUN): what they write after that is refused, and what they wrote before is read
   * here. AttemptSuperseded when a later attempt took it already.
   */
  static async load(knex: Knex, runId: string, attempt: number, keep = true): Promise<RunJournal> {
    if (attempt > 1) {
      const taken = await knex.raw(TAKE_RUN, { runId, attempt });
      const live = taken.rows[0]?.live_attempt as number | undefined;
      if (live !== undefined && live > attempt) throw new AttemptSuperseded(`Attempt ${live} of run ${runId} began: attempt ${attempt} is superseded`);
    }
    const rows = keep
      ? await knex('run_steps').where({ run_id: runId }).orderBy('seq').select('seq', 'attempt', 'kind', 'name', 'request_hash', 'response')
      : [];
    const steps = rows.map((r) => ({ seq: r.seq, attempt: r.attempt, kind: r.kind, name: r.name, requestHash: r.request_hash, response: r.response }));
    return new RunJournal(knex, runId, attempt, steps, keep);
  }

  /** Whether no later attempt has taken the run (TAKE_RUN): what this attempt writes is still the run's. */
  async holdsRun(): Promise<boolean> {
    const row = await this.knex('runs').where({ id: this.runId }).first('live_attempt');
    return row !== undefined && row.live_attempt <= this.attempt;
  }

  /** Steps recorded by earlier attempts. */
  get recorded(): number {
    return this.steps.length;
  }

  /** The seq the next `record` writes (a workspace checkpoint is named after the step that claims it). */
  get nextSeq(): number {
    return this.written + 1;
  }

  /** The attempt that recorded step `seq` before this attempt began, if any. */
  recordedBy(seq: number): number | undefined {
    return this.steps.find((s) => s.seq === seq)?.attempt;
  }

  /** How many of them this attempt's runtime has asked for again so far. */
  get replayed(): number {
    return Math.min(this.next, this.steps.length);
  }

  /** The recorded answer when this request was answered before, else undefined (do it now, then `record`). */
  replay(kind: StepKind, name: string, request: unknown): { response: unknown } | undefined {
    while (this.next < this.steps.length && this.steps[this.next].kind === 'program') this.next++;
    if (this.next >= this.steps.length) return undefined;
    const step = this.steps[this.next];
    if (step.kind !== kind || step.name !== name || step.requestHash !== digest(request)) {
      throw new JournalMismatch(
        `The run cannot resume: step ${this.next + 1} of its checkpoint was a ${step.kind} call (${step.name}) with other arguments than the runtime asks now`,
      );
    }
    this.next++;
    return { response: step.response };
  }

  /** A program's call answered before (kind `program`), found by its request wherever it is; else undefined. */
  replayProgram(name: string, request: unknown): { response: unknown } | undefined {
    const hash = digest(request);
    const step = this.steps.find((s) => s.kind === 'program' && s.name === name && s.requestHash === hash && !s.answered);
    if (!step) return undefined;
    step.answered = true;
    return { response: step.response };
  }

  /**
   * Writes a new step and its effects in one statement. `timing`: when the step began and a model
   * call's usage, which the run timeline shows (GET /api/runs/{id}/timeline).
   */
  async record(kind: StepKind, name: string, request: unknown, response: unknown, effects: StepEffects, timing: StepTiming = {}): Promise<void> {
    const seq = ++this.written;
    const live = await this.write(seq, kind, name, request, response, effects, timing).catch((err) => {
      if ((err as { code?: string }).code === UNIQUE_VIOLATION && (err as { table?: string }).table === 'run_steps') {
        throw new AttemptSuperseded(`Step ${seq} of run ${this.runId} was recorded by another attempt: attempt ${this.attempt} is superseded`);
      }
      throw err;
    });
    if (!live) throw new AttemptSuperseded(`A later attempt of run ${this.runId} began before step ${seq}: attempt ${this.attempt} is superseded`);
  }

  /** False when a later attempt holds the run: nothing was written. */
  private async write(
    seq: number,
    kind: StepKind,
    name: string,
    request: unknown,
    response: unknown,
    effects: StepEffects,
    timing: StepTiming,
  ): Promise<boolean> {
    const logs = (effects.logs ?? []).map((e) => ({ ...e, message: e.message.slice(0, MAX_LOG_MESSAGE) }));
    const usage = effects.usage;
    const written = await this.knex.raw(WRITE_STEP, {
      runId: this.runId,
      logCount: logs.length,
      logs: JSON.stringify(logs),
      withUsage: usage !== undefined,
      inputTokens: usage?.inputTokens ?? 0,
      outputTokens: usage?.outputTokens ?? 0,
      costUsd: usage?.costUsd ?? 0,
      packageId: effects.memory?.packageId ?? null,
      actorKey: effects.memory?.actorKey ?? null,
      memory: JSON.stringify(effects.memory?.items ?? []),
      keep: this.keep,
      seq,
      kind,
      name,
      requestHash: digest(request),
      response: JSON.stringify(response),
      attempt: this.attempt,
      startedAt: timing.startedAt ?? null,
      stepUsage: usage ? JSON.stringify(usage) : null,
      channel: RUN_EVENTS_CHANNEL,
    });
    return !written.rows.some((row: { live: boolean }) => !row.live);
  }
}
