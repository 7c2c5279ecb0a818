// A run's prompt rendered (DESIGN.md 5): the agent's prompt.md is a Mustache template, rendered
// with the view {runId, input, memories, checkpoint, history, timeout, uploads, platform}
// (shared/packages/prompt-template.ts). Only what the template names is read from the database.
// Everything read was written before the run was created, so every attempt of the run renders
// the same prompt (a resumed run's journal checks that the runtime asks what it asked before).
import type { Knex } from 'knex';
import type { FileRow } from '../shared/files/model.ts';
import { promptNamesUsed, type PromptView, promptTemplateErrors, renderPrompt } from '../shared/packages/prompt-template.ts';
import type { ResolvedAgent } from '../shared/packages/resolve-agent.ts';
import type { ChatSessionRow } from '../shared/chat/model.ts';
import type { RunRow } from '../shared/runs/model.ts';
import { inputFilesOf, type RunFilesInfo } from './run-files.ts';

/** As the format's runtime bounds them: its latest 50 notes (and pins), its 10 latest runs. */
export const PROMPT_MEMORIES = 50;
export const PROMPT_HISTORY = 10;

export interface RunPromptSpec {
  run: RunRow;
  agent: Pick<ResolvedAgent, 'packageId' | 'prompt'>;
  /** Whose agent memory the run reads (`actorKey` of the run). */
  actorKey: string;
  files?: RunFilesInfo;
}

/** The prompt template of a package imported before templates were checked may not parse: the run says where. */
export class PromptTemplateInvalid extends Error {
  override name = 'PromptTemplateInvalid';
}

/** The names the template reads; PromptTemplateInvalid, saying where, when it does not parse. */
function namesOf(template: string): Set<string> {
  try {
    return promptNamesUsed(template);
  } catch {
    throw new PromptTemplateInvalid(promptTemplateErrors(template, 'prompt.md')[0]?.message ?? 'prompt.md is not a valid Mustache template');
  }
}

/** The agent's prompt rendered for this run. */
export async function renderRunPrompt(knex: Knex, spec: RunPromptSpec): Promise<string> {
  const template = spec.agent.prompt;
  const names = namesOf(template);
  const { run } = spec;
  const memory = { orgId: run.org_id, packageId: spec.agent.packageId, actorKey: spec.actorKey, before: run.created_at };
  const [memories, checkpoint, history, uploads] = await Promise.all([
    names.has('memories') ? memoriesOf(knex, memory, 'note') : [],
    names.has('checkpoint') ? memoriesOf(knex, memory, 'pin') : [],
    names.has('history') ? historyOf(knex, run) : [],
    names.has('uploads') && spec.files ? uploadsOf(knex, run, spec.files) : [],
  ]);
  const view: PromptView = {
    runId: run.id,
    // The input as the model receives it: file fields hold their paths in the sandbox.
    input: { ...run.input, ...spec.files?.inputs },
    ...memoryFields(memories, checkpoint),
    history,
    timeout: run.timeout_seconds,
    uploads,
    platform: {},
  };
  return renderPrompt(template, view);
}

export interface ChatPromptSpec {
  session: Pick<ChatSessionRow, 'id' | 'org_id' | 'turn_timeout_seconds'>;
  agent: Pick<ResolvedAgent, 'packageId' | 'prompt'>;
  /** Whose agent memory the session reads (the person's, as in their runs). */
  actorKey: string;
  /** The message answered: memory written after it is not read, so a retried turn renders the same prompt. */
  askedAt: Date;
}

/**
 * The agent's prompt rendered for a chat turn, with the same view as a run's (DESIGN.md 5): the
 * session's id as `runId`, no input, history or uploads (a chat session has none), the person's
 * notes and pins, the turn's timeout.
 */
export async function renderChatPrompt(knex: Knex, spec: ChatPromptSpec): Promise<string> {
  const template = spec.agent.prompt;
  const names = namesOf(template);
  const memory = { orgId: spec.session.org_id, packageId: spec.agent.packageId, actorKey: spec.actorKey, before: spec.askedAt };
  const [memories, checkpoint] = await Promise.all([
    names.has('memories') ? memoriesOf(knex, memory, 'note') : [],
    names.has('checkpoint') ? memoriesOf(knex, memory, 'pin') : [],
  ]);
  return renderPrompt(template, {
    runId: spec.session.id,
    input: {},
    ...memoryFields(memories, checkpoint),
    history: [],
    timeout: spec.session.turn_timeout_seconds,
    uploads: [],
    platform: {},
  });
}

type MemoryRows = Array<{ content: string; created_at: Date }>;

/** The view's `memories` and `checkpoint`: pins oldest first, as the system prompt lists them. */
function memoryFields(notes: MemoryRows, pins: MemoryRows): Pick<PromptView, 'memories' | 'checkpoint'> {
  return {
    memories: notes.map((m) => ({ content: m.content, createdAt: m.created_at.getTime() })),
    checkpoint: pins.length ? [...pins].reverse().map((m) => m.content) : null,
  };
}

interface MemoryScope {
  orgId: string;
  packageId: string;
  actorKey: string;
  /** Only what was written before this moment. */
  before: Date;
}

/** The agent's notes or pins for this actor from before the run (or the chat message), most recent first. */
function memoriesOf(knex: Knex, scope: MemoryScope, kind: 'note' | 'pin'): Promise<MemoryRows> {
  return knex('agent_memory')
    .where({ org_id: scope.orgId, package_id: scope.packageId, actor_key: scope.actorKey, kind })
    .where('created_at', '<', scope.before)
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(PROMPT_MEMORIES)
    .select('content', 'created_at');
}

/**
 * The outputs of this agent's latest successful runs before this one, by the same actor in the
 * same space (what that actor can read of them anyway); the actor as the run's `actorKey` names
 * it: the end-user, else the API key, else the person.
 */
async function historyOf(knex: Knex, run: RunRow): Promise<PromptView['history']> {
  const q = knex('runs')
    .where({ org_id: run.org_id, space_id: run.space_id, package_id: run.package_id, status: 'success' })
    .where('created_at', '<', run.created_at)
    .whereNot('id', run.id);
  if (run.end_user_id) q.where('end_user_id', run.end_user_id);
  else if (run.actor_type === 'api_key') q.whereNull('end_user_id').where({ actor_type: 'api_key', actor_id: run.actor_id });
  else
    q.whereNull('end_user_id')
      .whereNot('actor_type', 'api_key')
      .whereRaw('coalesce(user_id, actor_id) = ?', [run.user_id ?? run.actor_id]);
  const rows = (await q.orderBy('created_at', 'desc').limit(PROMPT_HISTORY).select('id', 'finished_at', 'created_at', 'result')) as Array<
    Pick<RunRow, 'id' | 'finished_at' | 'created_at' | 'result'>
  >;
  return rows.map((r) => ({ runId: r.id, timestamp: (r.finished_at ?? r.created_at).getTime(), output: r.result?.output ?? null }));
}

/** The run's file inputs, in the order the input lists them, with the paths the sandbox holds them at. */
async function uploadsOf(knex: Knex, run: RunRow, files: RunFilesInfo): Promise<PromptView['uploads']> {
  const rows: FileRow[] = await inputFilesOf(knex, run.id);
  const out: PromptView['uploads'] = [];
  for (const [field, value] of Object.entries(run.input)) {
    const placed = files.inputs[field];
    if (placed === undefined) continue;
    const paths = Array.isArray(placed) ? placed : [placed];
    // The workspace placed the field's files in this order (run-files.ts, prepareRunFiles).
    const found = (Array.isArray(value) ? value : [value]).map((id) => rows.find((r) => r.id === id && r.field === field)).filter((r): r is FileRow => !!r);
    found.forEach((row, i) => {
      if (paths[i]) out.push({ name: row.name, path: paths[i], size: Number(row.size), type: row.content_type });
    });
  }
  return out;
}
