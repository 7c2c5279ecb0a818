// The folders a sandbox mounts (DESIGN.md 3 and 9), made on the host in one folder per sandbox
// (a run's, a chat turn's, a warm sandbox's). Two layouts:
// - files (agents that do not run code, as before): `input/` read-only at /workspace/input and
//   `output/` at /workspace/output, over a tmpfs /workspace that dies with the sandbox.
// - code (agents that list `bash`, and every warm sandbox, which may serve one): `workspace/` is
//   the agent's whole /workspace, writable, with `output/` inside it; `input/` and `skills/` are
//   mounted read-only over its `input/` and `.skills/`. Being a host folder, it outlives the
//   sandbox (a later step checkpoints it: `workspaceDirOf`). As root, a tmpfs of
//   `agent_disk_ceiling_mb` is mounted on it, so everything the agent can write, output/
//   included, is bounded by the kernel (ENOSPC) and by the sandbox's memory cgroup (tmpfs pages
//   are charged to their writer).
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SANDBOX_UID } from './reachable.ts';

const run = promisify(execFile);

/** What spawn.ts mounts; `workspaceDir` and `skillsDir` only in the code layout. */
export interface SandboxFolders {
  /** Read-only at /workspace/input. */
  inputDir: string;
  /** /workspace/output: bound on its own (files layout), or inside `workspaceDir` (code layout). */
  outputDir: string;
  /** The agent's whole /workspace, writable (code layout). */
  workspaceDir?: string;
  /** Read-only at /workspace/.skills (code layout): each skill at `<scope>/<name>/`. */
  skillsDir?: string;
}

/** Where a skill's files are inside the sandbox (DESIGN.md 9). */
export const SKILLS_MOUNT = '/workspace/.skills';
/** Commands' temporary files: /tmp is a link to it, so they count against the disk ceiling. */
const TMP_NAME = '.tmp';

/**
 * The host folder that is the agent's /workspace in the code layout of the sandbox folder
 * `root`: the one place its path is made (workspace checkpoints read and restore it here).
 */
export function workspaceDirOf(root: string): string {
  return path.join(root, 'workspace');
}

const asRoot = () => process.getuid?.() === 0;

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Whether `name` (`<prefix><pid>-...`) was made by a worker that is gone: folders and cgroups
 * carry their worker's pid, since a worker killed outright (SIGKILL) cannot remove its own.
 */
export function leftByGoneWorker(prefix: string): (name: string) => boolean {
  return (name) => {
    const m = new RegExp(`^${prefix}(\\d+)-`).exec(name);
    const pid = m ? Number(m[1]) : undefined;
    return pid !== undefined && pid !== process.pid && processGone(pid);
  };
}

/** The folders of sandboxes made for one run or turn (warm ones are pool.ts's: `sandbox-pool-<pid>-`). */
const ROOT_PREFIX = 'workspace-';
let leftoversRemoved = false;

/**
 * A new folder for a sandbox's code layout, named after this worker. The first one a worker makes
 * removes those of workers that are gone first: a killed worker leaves its workspaces' tmpfs
 * mounted, holding memory.
 */
export async function newCodeRoot(): Promise<string> {
  if (!leftoversRemoved) {
    leftoversRemoved = true;
    for (const name of fs.readdirSync(os.tmpdir()).filter(leftByGoneWorker(ROOT_PREFIX))) {
      try {
        removeSandboxFoldersSync(path.join(os.tmpdir(), name));
      } catch {
        // busy or gone: the next worker tries again
      }
    }
  }
  return fs.promises.mkdtemp(path.join(os.tmpdir(), `${ROOT_PREFIX}${process.pid}-`));
}

async function ownedBySandbox(dir: string, mode: number): Promise<void> {
  await fs.promises.mkdir(dir, { mode });
  if (asRoot()) await fs.promises.chown(dir, SANDBOX_UID, SANDBOX_UID);
}

let tmpfsWorks: boolean | undefined;
/**
 * Whether this worker can size a workspace: root, and a tmpfs mount succeeds (tried once on a
 * scratch folder). Without it the code layout's folder is unsized: the worker then has no
 * writable cgroups either, so agents that run code need SANDBOX_LIMITS=none (spawn.ts).
 */
export function workspaceCeilingEnforced(): boolean {
  if (tmpfsWorks !== undefined) return tmpfsWorks;
  tmpfsWorks = false;
  if (!asRoot()) return tmpfsWorks;
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'workspace-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    tmpfsWorks = true;
  } catch {
    // not allowed here (a container without CAP_SYS_ADMIN): unsized
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
  return tmpfsWorks;
}

/**
 * Makes the folders of `root` for a sandbox: the files layout, or with `code` the code layout
 * sized to `diskMb` (where the worker can). `processMode`: unisolated, nothing is mounted over
 * the workspace, so its `input` and `.skills` are links to the folders beside it.
 */
export async function makeSandboxFolders(root: string, opts: { code: boolean; diskMb: number; processMode?: boolean }): Promise<SandboxFolders> {
  const inputDir = path.join(root, 'input');
  await ownedBySandbox(inputDir, 0o755);
  // The sandbox's uid may traverse the root and write in its own folders, nothing else.
  if (asRoot()) await fs.promises.chmod(root, 0o755);
  if (!opts.code) {
    const outputDir = path.join(root, 'output');
    await ownedBySandbox(outputDir, 0o700);
    return { inputDir, outputDir };
  }
  // Written by the worker only (skills are materialized as root): read-only to the agent even unisolated.
  const skillsDir = path.join(root, 'skills');
  await fs.promises.mkdir(skillsDir, { mode: 0o755 });
  const workspaceDir = workspaceDirOf(root);
  await fs.promises.mkdir(workspaceDir, { mode: 0o700 });
  if (workspaceCeilingEnforced()) {
    const options = `size=${opts.diskMb}m,mode=0700,uid=${SANDBOX_UID},gid=${SANDBOX_UID},nosuid,nodev`;
    await run('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', workspaceDir]);
  } else if (asRoot()) {
    await fs.promises.chown(workspaceDir, SANDBOX_UID, SANDBOX_UID);
  }
  const outputDir = path.join(workspaceDir, 'output');
  await ownedBySandbox(outputDir, 0o700);
  await ownedBySandbox(path.join(workspaceDir, TMP_NAME), 0o700);
  if (opts.processMode) {
    await fs.promises.symlink('../input', path.join(workspaceDir, 'input'));
    await fs.promises.symlink('../skills', path.join(workspaceDir, '.skills'));
  } else {
    // Mount points of the read-only binds.
    await ownedBySandbox(path.join(workspaceDir, 'input'), 0o755);
    await ownedBySandbox(path.join(workspaceDir, '.skills'), 0o755);
  }
  return { inputDir, outputDir, workspaceDir, skillsDir };
}

/** The folders `root` holds (a warm sandbox's, made by makeSandboxFolders): the code layout when it has a workspace. */
export function sandboxFoldersOf(root: string): SandboxFolders {
  const workspaceDir = workspaceDirOf(root);
  if (!fs.existsSync(workspaceDir)) return { inputDir: path.join(root, 'input'), outputDir: path.join(root, 'output') };
  return { inputDir: path.join(root, 'input'), outputDir: path.join(workspaceDir, 'output'), workspaceDir, skillsDir: path.join(root, 'skills') };
}

/**
 * The code layout for a session without input files (a chat turn): the warm sandbox's folders
 * (`root`), or new ones; `remove` removes them with their folder.
 */
export async function codeFolders(
  root: string | undefined,
  opts: { diskMb: number; processMode: boolean },
): Promise<{ folders: SandboxFolders; remove(): Promise<void> }> {
  const dir = root ?? (await newCodeRoot());
  const remove = () => removeSandboxFolders(dir);
  try {
    return { folders: root ? sandboxFoldersOf(root) : await makeSandboxFolders(dir, { code: true, ...opts }), remove };
  } catch (err) {
    await remove();
    throw err;
  }
}

function mounted(dir: string): boolean {
  try {
    return fs.statSync(dir).dev !== fs.statSync(path.dirname(dir)).dev;
  } catch {
    return false;
  }
}

/**
 * Removes a sandbox folder with everything in it, its workspace's tmpfs unmounted first (lazily:
 * a sandbox still dying keeps it until it is gone, then the kernel frees it).
 */
export async function removeSandboxFolders(root: string): Promise<void> {
  const workspaceDir = workspaceDirOf(root);
  if (mounted(workspaceDir)) await run('umount', ['-l', workspaceDir]);
  await fs.promises.rm(root, { recursive: true, force: true });
}

/** removeSandboxFolders for a worker's start (pool.ts: the leftovers of a worker that was killed). */
export function removeSandboxFoldersSync(root: string): void {
  const workspaceDir = workspaceDirOf(root);
  if (mounted(workspaceDir)) execFileSync('umount', ['-l', workspaceDir], { stdio: 'ignore' });
  fs.rmSync(root, { recursive: true, force: true });
}

/** bwrap's arguments for `/workspace` and what is mounted in it (after the system's, before --remount-ro). */
export function workspaceMounts(folders: SandboxFolders | undefined): string[] {
  if (!folders) return ['--tmpfs', '/workspace'];
  if (!folders.workspaceDir || !folders.skillsDir) {
    return ['--tmpfs', '/workspace', '--ro-bind', folders.inputDir, '/workspace/input', '--bind', folders.outputDir, '/workspace/output'];
  }
  return [
    '--bind',
    folders.workspaceDir,
    '/workspace',
    '--ro-bind',
    folders.inputDir,
    '/workspace/input',
    '--ro-bind',
    folders.skillsDir,
    SKILLS_MOUNT,
    // /tmp is the workspace's: what commands leave there counts against the disk ceiling.
    '--symlink',
    `/workspace/${TMP_NAME}`,
    '/tmp',
  ];
}

/** Unisolated (SANDBOX_MODE=process), the runtime finds the folders where they are on the host. */
export function workspaceEnv(folders: SandboxFolders | undefined): Record<string, string> {
  if (!folders) return {};
  return {
    WORKSPACE_INPUT: folders.inputDir,
    WORKSPACE_OUTPUT: folders.outputDir,
    ...(folders.workspaceDir && folders.skillsDir ? { WORKSPACE_ROOT: folders.workspaceDir, WORKSPACE_SKILLS: folders.skillsDir } : {}),
  };
}
