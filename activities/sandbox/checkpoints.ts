// Workspace checkpoints (DESIGN.md 9, issue 31): the workspace of an agent that runs code,
// stored after each tool call that may have changed it, so that a run resumed on another worker
// finds its workspace as it was after its last completed step.
//
// - What: the host folder that is the agent's /workspace (workspace.ts, `workspaceDirOf`), all
//   of it but `input/` and `.skills/` (read-only mounts of what the run brings anyway), output/
//   and /tmp (`.tmp/`) included, as a tar (tar.ts). A link that leads out of /workspace, or
//   anything but files, folders and links, is left out (and named once in a run log line).
// - Where: the file storage (local disk or S3), under `workspace-checkpoints/<run>/`, one
//   object per checkpoint named `<seq>-<attempt>.tar` after the journal step that claims it
//   (the step that completed the tool call, sidecar/journal.ts). The store writes an object whole
//   or not at all, and the step is recorded only once its checkpoint is stored; a resume takes
//   the checkpoint of the highest seq whose step was recorded by the attempt that names it. So a
//   checkpoint a loss cut off, or one of an attempt that lost the race for its step, is never
//   taken: the resumed run finds the workspace of its last completed step and runs again what
//   followed.
// - When not: when a quick walk of the workspace (paths, sizes, modes, times, inodes) matches
//   the last checkpoint's, nothing is stored; the step then claims none, and the last one stands.
// - Until: the run's end (finalizeRun deletes the folder, whatever the status), with the file
//   sweep as a backstop for a delete that failed or a worker lost at the end.
//
// The workspace never holds a credential (api-call's are injected outside the sandbox), so
// neither does a checkpoint.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Knex } from 'knex';
import type { FileStorage } from '../../shared/files/storage.ts';
import { appendRunLog, type LogEntryInput } from '../../shared/runs/logs.ts';
import { LIVE_STATUSES } from '../../shared/runs/model.ts';
import { SANDBOX_UID } from './reachable.ts';
import { extractTar, linkStaysIn, type TarEntry, tarSize, tarStream } from './tar.ts';

export const CHECKPOINTS_FOLDER = 'workspace-checkpoints';
/** Where the agent sees its workspace: links must stay under it. */
const WORKSPACE_MOUNT = '/workspace';
/** Top-level names a checkpoint leaves out: read-only mounts of what every attempt brings again. */
const LEFT_OUT = ['input', '.skills'];
/** Tries of one checkpoint before the attempt gives up (and is retried, as after a loss). */
const TRIES = 3;

/** The storage folder of a run's checkpoints. */
export const checkpointsOf = (runId: string) => `${CHECKPOINTS_FOLDER}/${runId}/`;
const keyOf = (runId: string, seq: number, attempt: number) => `${checkpointsOf(runId)}${seq}-${attempt}.tar`;

function parseKey(key: string): { seq: number; attempt: number } | undefined {
  const m = /\/(\d+)-(\d+)\.tar$/.exec(key);
  return m ? { seq: Number(m[1]), attempt: Number(m[2]) } : undefined;
}

/** The workspace's checkpoint could not be stored: the attempt must not record the step as if it were. */
export class WorkspaceNotCheckpointed extends Error {}

interface Walked {
  entries: TarEntry[];
  /** Changes with any entry's path, type, size, mode, times or inode (ctime: any write or chmod). */
  fingerprint: string;
  /** What a checkpoint cannot hold, with why. */
  leftOut: string[];
}

/**
 * Walks the workspace, folders before what they hold. Synchronous calls (a few microseconds
 * each, far cheaper than the thread pool's), the event loop given a turn every 2000 entries.
 */
export async function walkWorkspace(dir: string): Promise<Walked> {
  const entries: TarEntry[] = [];
  const leftOut: string[] = [];
  const hash = createHash('sha256');
  let seen = 0;
  const visit = async (rel: string, host: string): Promise<void> => {
    let names: string[];
    try {
      names = fs.readdirSync(host).sort();
    } catch {
      return; // gone meanwhile
    }
    for (const name of names) {
      if (!rel && LEFT_OUT.includes(name)) continue;
      const childRel = rel ? `${rel}/${name}` : name;
      const childHost = path.join(host, name);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(childHost);
      } catch {
        continue;
      }
      hash.update(`${childRel}\0${st.mode}\0${st.size}\0${st.mtimeMs}\0${st.ctimeMs}\0${st.ino}\n`);
      if (++seen % 2000 === 0) await new Promise((resolve) => setImmediate(resolve));
      if (st.isDirectory()) {
        entries.push({ type: 'dir', path: childRel, mode: st.mode, mtimeMs: st.mtimeMs });
        await visit(childRel, childHost);
      } else if (st.isFile()) {
        entries.push({ type: 'file', path: childRel, mode: st.mode, mtimeMs: st.mtimeMs, size: st.size, source: childHost });
      } else if (st.isSymbolicLink()) {
        const target = fs.readlinkSync(childHost);
        if (linkStaysIn(WORKSPACE_MOUNT, childRel, target)) entries.push({ type: 'symlink', path: childRel, mode: st.mode, mtimeMs: st.mtimeMs, target });
        else leftOut.push(`${childRel} (a link out of /workspace)`);
      } else {
        leftOut.push(`${childRel} (neither a file, a folder nor a link)`);
      }
    }
  };
  await visit('', dir);
  return { entries, fingerprint: hash.digest('hex'), leftOut };
}

export interface CheckpointsOptions {
  storage: FileStorage;
  runId: string;
  /** The host folder that is the agent's /workspace (`workspaceDirOf`). */
  dir: string;
  attempt: number;
  /** `agent_disk_ceiling_mb`: a checkpoint's files are restored up to it. */
  ceilingMb: number;
}

/** A checkpoint stored for a step about to be recorded. */
export interface TakenCheckpoint {
  key: string;
  fingerprint: string;
  /** Written with the step: what the checkpoint left out, when that changed. */
  logs: LogEntryInput[];
}

/** The steps recorded before this attempt (sidecar/journal.ts): who recorded which. */
export interface RecordedSteps {
  recordedBy(seq: number): number | undefined;
}

/**
 * Restores checkpoint `key` into `dir`, a fresh workspace: its empty `output/` and `.tmp/` are
 * removed first (the checkpoint holds them as they were), then the archive is extracted with
 * every path confined (tar.ts), as the sandbox's user.
 */
export async function restoreCheckpoint(storage: FileStorage, key: string, dir: string, ceilingMb: number): Promise<{ entries: number; bytes: number }> {
  for (const name of fs.readdirSync(dir)) {
    // rmdir: only empty folders, so nothing but the fresh layout is ever removed.
    if (!LEFT_OUT.includes(name)) fs.rmdirSync(path.join(dir, name));
  }
  return extractTar(await storage.get(key), dir, {
    maxFileBytes: ceilingMb * 1024 * 1024,
    reserved: LEFT_OUT,
    mountedAt: WORKSPACE_MOUNT,
    owner: process.getuid?.() === 0 ? SANDBOX_UID : undefined,
  });
}

export class WorkspaceCheckpoints {
  private readonly opts: CheckpointsOptions;
  /** The checkpoint a resume would restore now (the last one claimed). */
  private current?: string;
  private fingerprint: string;
  private shownLeftOut = '';

  private constructor(opts: CheckpointsOptions, fingerprint: string, current?: string) {
    this.opts = opts;
    this.fingerprint = fingerprint;
    this.current = current;
  }

  /**
   * The checkpoints of an attempt: a retried attempt first restores the last claimed checkpoint
   * (if any) into its fresh workspace, before its runtime starts replaying. `restored` says which.
   */
  static async open(
    opts: CheckpointsOptions,
    journal: RecordedSteps,
  ): Promise<{ checkpoints: WorkspaceCheckpoints; restored?: { seq: number; entries: number; bytes: number } }> {
    let restored: { key: string; seq: number; entries: number; bytes: number } | undefined;
    if (opts.attempt > 1) {
      const claimed = (await opts.storage.list(checkpointsOf(opts.runId)))
        .map((key) => ({ key, ...parseKey(key) }))
        .filter((c): c is { key: string; seq: number; attempt: number } => c.seq !== undefined && journal.recordedBy(c.seq) === c.attempt)
        .sort((a, b) => b.seq - a.seq)[0];
      if (claimed) restored = { key: claimed.key, seq: claimed.seq, ...(await restoreCheckpoint(opts.storage, claimed.key, opts.dir, opts.ceilingMb)) };
    }
    const { fingerprint } = await walkWorkspace(opts.dir);
    return { checkpoints: new WorkspaceCheckpoints(opts, fingerprint, restored?.key), restored };
  }

  /**
   * After a tool call that may have changed the workspace, before its step is recorded as step
   * `seq`: stores the workspace as checkpoint `seq` unless nothing changed (undefined). Tried
   * TRIES times (a file that changed while it was read, a storage error), then
   * WorkspaceNotCheckpointed.
   */
  async take(seq: number): Promise<TakenCheckpoint | undefined> {
    const { storage, runId, dir, attempt } = this.opts;
    for (let tried = 1; ; tried++) {
      try {
        const walked = await walkWorkspace(dir);
        if (walked.fingerprint === this.fingerprint) return undefined;
        const key = keyOf(runId, seq, attempt);
        await storage.put(key, Readable.from(tarStream(walked.entries)), tarSize(walked.entries));
        return { key, fingerprint: walked.fingerprint, logs: this.leftOutLine(walked.leftOut) };
      } catch (err) {
        if (tried >= TRIES) throw new WorkspaceNotCheckpointed(`The workspace could not be checkpointed: ${(err as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** tried));
      }
    }
  }

  /** The step claiming `taken` is recorded: a resume restores it from now on, and the one before goes. */
  settle(taken: TakenCheckpoint): void {
    const previous = this.current;
    this.current = taken.key;
    this.fingerprint = taken.fingerprint;
    // Not awaited: a delete that fails leaves an object the run's end deletes.
    if (previous && previous !== taken.key) this.opts.storage.delete(previous).catch(() => undefined);
  }

  /** A warn line naming what checkpoints leave out, once for each change of that list. */
  private leftOutLine(leftOut: string[]): LogEntryInput[] {
    const shown = leftOut.join(', ');
    if (shown === this.shownLeftOut) return [];
    this.shownLeftOut = shown;
    if (!shown) return [];
    const listed = leftOut.length > 10 ? `${leftOut.slice(0, 10).join(', ')} and ${leftOut.length - 10} more` : shown;
    return [{ level: 'warn', type: 'files', message: `The workspace's checkpoint leaves out what a resumed run would not find: ${listed}` }];
  }
}

/**
 * The checkpoints of an attempt of `runId` (open), with a run log line when a checkpoint was
 * restored; a checkpoint that cannot be read or is refused fails the attempt (the caller says so).
 */
export async function openWorkspaceCheckpoints(knex: Knex, opts: CheckpointsOptions, journal: RecordedSteps): Promise<WorkspaceCheckpoints> {
  const { checkpoints, restored } = await WorkspaceCheckpoints.open(opts, journal);
  if (restored) {
    const mb = (restored.bytes / 1024 / 1024).toFixed(1);
    await appendRunLog(knex, opts.runId, {
      level: 'info',
      type: 'files',
      message: `The workspace was restored as it was after step ${restored.seq} (${restored.entries} entries, ${mb} MB of files)`,
    });
  }
  return checkpoints;
}

/** Deletes every checkpoint of `runId` (its run ended). */
export function deleteWorkspaceCheckpoints(storage: FileStorage, runId: string): Promise<void> {
  return storage.deleteAll(checkpointsOf(runId));
}

/**
 * The sweep's backstop (activities/sweep-expired-files.ts): deletes the checkpoints of every run
 * that is no longer pending or running, or no longer exists. How many runs' were deleted.
 */
export async function sweepWorkspaceCheckpoints(knex: Knex, storage: FileStorage): Promise<number> {
  const runIds = [...new Set((await storage.list(`${CHECKPOINTS_FOLDER}/`)).map((key) => key.split('/')[1]))];
  let removed = 0;
  for (let i = 0; i < runIds.length; i += 1000) {
    const batch = runIds.slice(i, i + 1000);
    const live = new Set<string>(await knex('runs').whereIn('id', batch).whereIn('status', LIVE_STATUSES).pluck('id'));
    for (const id of batch.filter((id) => !live.has(id))) {
      await deleteWorkspaceCheckpoints(storage, id);
      removed++;
    }
  }
  return removed;
}
