// The run's journal (DESIGN.md section 8). The runtime is deterministic: given the same answers
// it asks the same questions in the same order. The sidecar records each answer (a model
// completion, a tool result) together with its effects (usage, log lines, notes) in one
// transaction; an attempt on another worker starts a fresh runtime and the journal answers every
// question it already holds, so no completed model call is sent again and no effect is written
// twice. Only calls cut off by the loss itself are made again.
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
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

/** When a step began, and what a model call spent (migration 028). */
export interface StepTiming {
  startedAt?: Date;
  usage?: RunUsage;
}

/** The checkpoint no longer matches what the runtime asks: resuming would change the run. */
export class JournalMismatch extends Error {}

/**
 * Another attempt of the run recorded this step first: Temporal gave the run to it while this
 * attempt's worker stopped responding (DESIGN.md section 8). This attempt is superseded and must
 * end without writing to the run; the live one goes on from the journal.
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

  static async load(knex: Knex, runId: string, attempt: number, keep = true): Promise<RunJournal> {
    const rows = keep
      ? await knex('run_steps').where({ run_id: runId }).orderBy('seq').select('seq', 'attempt', 'kind', 'name', 'request_hash', 'response')
      : [];
    const steps = rows.map((r) => ({ seq: r.seq, attempt: r.attempt, kind: r.kind, name: r.name, requestHash: r.request_hash, response: r.response }));
    return new RunJournal(knex, runId, attempt, steps, keep);
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
   * Writes a new step's effects and the step itself in one transaction. `timing`: when the step
   * began and a model call's usage, which the run timeline shows (GET /api/runs/{id}/timeline).
   */
  async record(
    kind: StepKind,
    name: string,
    request: unknown,
    response: unknown,
    effects: (trx: Knex.Transaction) => Promise<void>,
    timing: StepTiming = {},
  ): Promise<void> {
    const seq = ++this.written;
    await this.write(seq, kind, name, request, response, effects, timing).catch((err) => {
      if ((err as { code?: string }).code === UNIQUE_VIOLATION && (err as { table?: string }).table === 'run_steps') {
        throw new AttemptSuperseded(`Step ${seq} of run ${this.runId} was recorded by another attempt: attempt ${this.attempt} is superseded`);
      }
      throw err;
    });
  }

  private async write(
    seq: number,
    kind: StepKind,
    name: string,
    request: unknown,
    response: unknown,
    effects: (trx: Knex.Transaction) => Promise<void>,
    timing: StepTiming,
  ): Promise<void> {
    await this.knex.transaction(async (trx) => {
      await effects(trx);
      if (this.keep) {
        await trx('run_steps').insert({
          run_id: this.runId,
          seq,
          kind,
          name,
          request_hash: digest(request),
          response: JSON.stringify(response),
          attempt: this.attempt,
          started_at: timing.startedAt ?? null,
          usage: timing.usage ? JSON.stringify(timing.usage) : null,
        });
      }
    });
  }
}
