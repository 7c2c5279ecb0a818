// A run's files in the sandbox (DESIGN.md 7). Before the sandbox starts, the run's input files
// are copied from the file storage into a host folder mounted read-only at /workspace/input
// (`<field>/<name>`), and an empty folder is mounted writable at /workspace/output (inside the
// agent's whole workspace when it runs code: sandbox/workspace.ts). When the
// attempt ends, what the agent wrote there becomes files of the run, bounded in count and bytes
// and within the organization's storage quota; the run log says what was kept and what not.
// Every path here is built from names a tenant chose (field and file names) with `pathUnder`, and
// as root the worker writes the sandbox's folders as the sandbox's uid, never as itself.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Knex } from 'knex';
import { lookup } from 'mime-types';
import { MAX_NAME_BYTES, pathUnder, unsafeNameReason } from '../shared/files/confine.ts';
import { unreferencedKeys } from '../shared/files/expiry.ts';
import { type FileRow, orgBytesInUse, runFileColumns } from '../shared/files/model.ts';
import type { FileStorage } from '../shared/files/storage.ts';
import { appendRunLog } from '../shared/runs/logs.ts';
import type { RunRow } from '../shared/runs/model.ts';
import { newId } from '../shared/ids.ts';
import { SANDBOX_UID, sandboxModeHere } from './sandbox/spawn.ts';
import { makeSandboxFolders, newCodeRoot, removeSandboxFolders, type SandboxFolders, sandboxFoldersOf } from './sandbox/workspace.ts';

/** At most this many files a run writes are kept. */
export const OUTPUT_MAX_FILES = 20;
export const INPUT_MOUNT = '/workspace/input';
export const OUTPUT_MOUNT = '/workspace/output';

/** What the runtime is told about the files (GET /v1/run `files`). */
export interface RunFilesInfo {
  /** Each file field's value as the agent sees it: its path (a list for an array field). */
  inputs: Record<string, string | string[]>;
  /** Bounds `write_file` enforces (the collector enforces them again). */
  maxOutputFiles: number;
  maxOutputBytes: number;
}

export interface RunWorkspace extends SandboxFolders {
  info: RunFilesInfo;
  remove(): Promise<void>;
}

/**
 * `name`, or `name (2).ext`, ... when a field already holds that name; the stem is shortened
 * (by whole characters) when the suffix would take the name past MAX_NAME_BYTES.
 */
function uniqueName(name: string, taken: Set<string>): string {
  const ext = path.extname(name);
  const stem = Array.from(name.slice(0, name.length - ext.length));
  let candidate = name;
  for (let n = 2; taken.has(candidate); n++) {
    const suffix = ` (${n})${ext}`;
    let kept = stem.length;
    while (kept > 0 && Buffer.byteLength(stem.slice(0, kept).join('') + suffix) > MAX_NAME_BYTES) kept--;
    candidate = stem.slice(0, kept).join('') + suffix;
  }
  taken.add(candidate);
  return candidate;
}

/** The run's input files, as `prepareRunFiles` takes them. */
export function inputFilesOf(knex: Knex, runId: string): Promise<FileRow[]> {
  return knex<FileRow>('files').where({ run_id: runId, origin: 'input' }).orderBy('id');
}

const asRoot = () => process.getuid?.() === 0;

/** Makes `root`/input and `root`/output for a sandbox that mounts them (sandbox/workspace.ts, the files layout). */
export function makeWorkspaceDirs(root: string): Promise<SandboxFolders> {
  return makeSandboxFolders(root, { code: false, diskMb: 0 });
}

// Makes the field's folder unless it is there (never through a link) and creates the file, which
// must not exist yet (`set -C`: O_EXCL, so not through a link either), read-only, from stdin.
const WRITE_INPUT_SCRIPT = 'set -eC; if [ ! -d "$1" ] || [ -h "$1" ]; then mkdir -m 755 -- "$1"; fi; umask 222; exec cat > "$1/$2"';

/**
 * Writes `body` to `dir`/`name` by a child process running as the sandbox's uid when the worker
 * is root (as the worker otherwise): a write the path checks somehow let astray still cannot
 * touch what only root may, and the sandbox's files are its own.
 */
async function writeAsSandboxUser(dir: string, name: string, body: Readable): Promise<void> {
  const child = spawn('/bin/sh', ['-c', WRITE_INPUT_SCRIPT, 'sh', dir, name], {
    stdio: ['pipe', 'ignore', 'pipe'],
    env: { PATH: '/usr/bin:/bin' },
    ...(asRoot() ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : {}),
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-2000);
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  // A child that fails early closes its stdin: its own reason (stderr) says more than EPIPE.
  const piped = pipeline(body, child.stdin!).then(
    () => undefined,
    (err: Error) => err,
  );
  const [code, pipeError] = await Promise.all([exited, piped]);
  if (code !== 0) throw new Error(`${name} could not be written: ${stderr.trim() || `exit code ${code}`}`);
  if (pipeError) throw pipeError;
}

/**
 * Copies the run's input files (`rows`) out of storage into the folders the sandbox mounts:
 * new ones (the code layout with `layout.code`: sandbox/workspace.ts), or those `root` already
 * holds (a warm sandbox's). The input folder is the sandbox uid's, so that the input files are
 * written as that uid (writeAsSandboxUser); the sandbox mounts it read-only. `remove` removes
 * `root` with everything in it.
 */
export async function prepareRunFiles(
  storage: FileStorage,
  run: Pick<RunRow, 'input'>,
  rows: Array<Pick<FileRow, 'id' | 'field' | 'name' | 'storage_key'>>,
  maxOutputBytes: number,
  root?: string,
  layout: { code: boolean; diskMb: number } = { code: false, diskMb: 0 },
): Promise<RunWorkspace> {
  const dir = root ?? (layout.code ? await newCodeRoot() : await fs.promises.mkdtemp(path.join(os.tmpdir(), 'run-files-')));
  const remove = () => removeSandboxFolders(dir);
  try {
    const folders = root ? sandboxFoldersOf(root) : await makeSandboxFolders(dir, { ...layout, processMode: layout.code && sandboxModeHere() === 'process' });
    const { inputDir } = folders;
    const inputs: RunFilesInfo['inputs'] = {};
    const names = new Map<string, Set<string>>();
    // The stored input lists a field's files in the order given: their paths follow it.
    for (const [field, value] of Object.entries(run.input)) {
      const ids = Array.isArray(value) ? value : [value];
      const paths: string[] = [];
      for (const id of ids) {
        const row = rows.find((r) => r.id === id && r.field === field);
        if (!row) continue;
        const taken = names.get(field) ?? new Set<string>();
        names.set(field, taken);
        const name = uniqueName(row.name, taken);
        // Checked at launch, and again here: the field and the name are each one segment under the input folder.
        const fieldDir = pathUnder(inputDir, field);
        pathUnder(fieldDir, name);
        await writeAsSandboxUser(fieldDir, name, await storage.get(row.storage_key));
        paths.push(`${INPUT_MOUNT}/${field}/${name}`);
      }
      if (paths.length) inputs[field] = Array.isArray(value) ? paths : paths[0];
    }
    return { ...folders, info: { inputs, maxOutputFiles: OUTPUT_MAX_FILES, maxOutputBytes }, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}

/** The media type of an output file, from its name. */
export function contentTypeOf(name: string): string {
  const type = lookup(name);
  if (!type) return 'application/octet-stream';
  return type.startsWith('text/') || type === 'application/json' ? `${type}; charset=utf-8` : type;
}

function formatSize(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The file lstat saw, opened without following a link (a name swapped for a link since is not
 * opened) and without waiting on a FIFO; undefined when it is no longer that regular file.
 */
async function openUnchanged(c: { file: string; size: number; ino: number }): Promise<fs.promises.FileHandle | undefined> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(c.file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  const st = await handle.stat();
  if (st.isFile() && st.ino === c.ino && st.size === c.size && st.nlink === 1) return handle;
  await handle.close();
  return undefined;
}

/**
 * Makes files of the run from what the agent left in its output folder: regular files at the
 * top level (no links of either kind, no name that is not one plain segment), by name, at most
 * OUTPUT_MAX_FILES, each and all together at most `maxBytes`, and within ORG_STORAGE_QUOTA_BYTES.
 * Idempotent: a retried collection replaces the run's output files (same storage keys) instead
 * of adding more, and removes bytes no file holds any more.
 */
export async function collectOutputFiles(
  deps: { knex: Knex; storage: FileStorage; maxBytes: number; quotaBytes: number | undefined },
  run: RunRow,
  outputDir: string,
): Promise<FileRow[]> {
  const { knex, storage } = deps;
  // In an agent's own workspace (it runs code) output/ is the agent's too: it may have removed it,
  // or put a link there, which would lead this worker's reads to a folder of its host.
  const folder = await fs.promises.lstat(outputDir).catch(() => undefined);
  if (!folder?.isDirectory()) {
    await appendRunLog(knex, run.id, { level: 'warn', type: 'files', message: `Not kept: ${OUTPUT_MOUNT} is not a folder (the agent removed or replaced it)` });
    return [];
  }
  const entries = (await fs.promises.readdir(outputDir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  const skipped: string[] = [];
  const candidates: Array<{ name: string; size: number; file: string; ino: number }> = [];
  for (const e of entries) {
    // Names become file names of the run, shown in logs and headers, and inputs of later runs.
    const badName = unsafeNameReason(e.name);
    if (badName) {
      skipped.push(`${JSON.stringify(e.name)} (the name ${badName})`);
      continue;
    }
    const file = pathUnder(outputDir, e.name);
    const st = await fs.promises.lstat(file);
    if (!st.isFile()) skipped.push(`${e.name} (not a regular file)`);
    // Another name of the same file may be anywhere on the same file system: its bytes are not the run's.
    else if (st.nlink > 1) skipped.push(`${e.name} (a hard link: the file has other names)`);
    else if (candidates.length >= OUTPUT_MAX_FILES) skipped.push(`${e.name} (over ${OUTPUT_MAX_FILES} files)`);
    else candidates.push({ name: e.name, size: st.size, file, ino: st.ino });
  }
  if (!candidates.length && !skipped.length) return [];
  // The bytes first, bounded by count (above) and size, so the quota lock below is held for rows only.
  let total = 0;
  const stored: Array<{ name: string; size: number; key: string; sha256: string }> = [];
  for (const [i, c] of candidates.entries()) {
    if (total + c.size > deps.maxBytes) {
      skipped.push(`${c.name} (${formatSize(c.size)}: the run's files would exceed ${formatSize(deps.maxBytes)}, FILE_MAX_BYTES)`);
      continue;
    }
    const handle = await openUnchanged(c);
    if (!handle) {
      skipped.push(`${c.name} (changed while the files were collected)`);
      continue;
    }
    const key = `${run.org_id}/runs/${run.id}/output/${i}`;
    try {
      const { sha256 } = await storage.put(key, handle.createReadStream(), c.size);
      stored.push({ name: c.name, size: c.size, key, sha256 });
    } finally {
      await handle.close();
    }
    total += c.size;
  }
  const { kept, unused } = await knex.transaction(async (trx) => {
    // As uploads do: one quota decision at a time per organization.
    await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`uploads-quota:${run.org_id}`]);
    const previous: string[] = (await trx('files').where({ run_id: run.id, origin: 'output' }).delete().returning('storage_key')).map(
      (r: { storage_key: string }) => r.storage_key,
    );
    let room = deps.quotaBytes === undefined ? Number.POSITIVE_INFINITY : deps.quotaBytes - (await orgBytesInUse(trx, run.org_id));
    const rows: FileRow[] = [];
    for (const f of stored) {
      if (f.size > room) {
        skipped.push(`${f.name} (${formatSize(f.size)}: over the organization's storage quota, ORG_STORAGE_QUOTA_BYTES)`);
        continue;
      }
      room -= f.size;
      const [row] = await trx('files')
        .insert({
          id: newId('file'),
          ...runFileColumns(run, 'output'),
          name: f.name,
          content_type: contentTypeOf(f.name),
          size: f.size,
          sha256: f.sha256,
          storage_key: f.key,
        })
        .returning('*');
      rows.push(row);
    }
    const bytes = rows.reduce((n, r) => n + Number(r.size), 0);
    if (rows.length) {
      await appendRunLog(trx, run.id, {
        level: 'info',
        type: 'files',
        message: `Kept ${rows.length} output file${rows.length === 1 ? '' : 's'} (${formatSize(bytes)}): ${rows.map((r) => r.name).join(', ')}`,
      });
    }
    if (skipped.length) await appendRunLog(trx, run.id, { level: 'warn', type: 'files', message: `Not kept: ${skipped.join('; ')}` });
    // Bytes no row holds now: those over the quota, and an earlier collection's beyond this one's.
    return { kept: rows, unused: await unreferencedKeys(trx, [...previous, ...stored.map((f) => f.key)], {}) };
  });
  for (const key of unused) await storage.delete(key);
  return kept;
}
