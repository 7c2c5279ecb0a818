// What the sandbox user must reach on the host (issue 28). As root, bwrap starts as that user and
// binds the worker's Node and the folders a sandbox mounts: a parent folder closed to it fails the
// sandbox ("Can't find source path ...: Permission denied"), as the clone's is when root puts it
// under /root (0700), or the temporary directory's when TMPDIR is private to root.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { canEnter, canExecute, type Ids, reachableCopy } from '../../shared/stack/reachable-copy.ts';

export const SANDBOX_UID = 65534; // nobody

/** A sandbox cannot start on this worker; the message says why and what the operator can do. */
export class SandboxUnavailableError extends Error {
  override name = 'SandboxUnavailableError';
}

/** The user sandboxes run as: `nobody` when the worker is root, else the worker's own (undefined). */
function sandboxIds(): Ids | undefined {
  return process.getuid?.() === 0 ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : undefined;
}

/** SHA-256 of a file read in chunks: Node's binary is over 100 MB, the worker keeps its memory small. */
function fileHash(file: string): string {
  const hash = createHash('sha256');
  const chunk = Buffer.alloc(1024 * 1024);
  const fd = fs.openSync(file, 'r');
  try {
    for (let n = fs.readSync(fd, chunk); n > 0; n = fs.readSync(fd, chunk)) hash.update(chunk.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

export interface SandboxNode {
  /** The binary sandboxes run. */
  path: string;
  /** The worker's own binary, when `path` is a copy of it. */
  copiedFrom?: string;
}

let found: SandboxNode | SandboxUnavailableError | undefined;

/**
 * The Node binary sandboxes run: the worker's own where the sandbox user can execute it, else a
 * copy in a shared root that user can reach, made once per Node version and binary (its hash:
 * every clone with the same Node shares it). Decided once per worker.
 */
export function sandboxNode(): SandboxNode {
  found ??= findSandboxNode();
  if (found instanceof SandboxUnavailableError) throw found;
  return found;
}

function findSandboxNode(): SandboxNode | SandboxUnavailableError {
  const own = fs.realpathSync(process.execPath);
  const ids = sandboxIds();
  if (!ids || canExecute(own, ids)) return { path: own };
  const { copy, tried } = reachableCopy({
    source: own,
    name: `sandbox-node-${process.version}-${os.platform()}-${os.arch()}-${fileHash(own).slice(0, 16)}`,
    // In a folder of its own: bwrap binds the binary's folder into the sandbox.
    entry: path.join('bin', 'node'),
    ids,
    works: (bin) => canExecute(bin, ids),
  });
  if (copy) return { path: copy, copiedFrom: own };
  return new SandboxUnavailableError(
    `the sandbox user (uid ${SANDBOX_UID}) cannot execute Node at ${own} (a parent folder is not traversable), and copying it ` +
      `to ${tried.join(' or ')} did not help; put the project where that user can read it`,
  );
}

/**
 * Where the worker's temporary folders can go: the sandbox mounts some of them (its socket's, its
 * files', the compiled runtime's), so their parent must be open to the sandbox user. The
 * temporary directory when it is, else the first of /tmp and /var/tmp that is (undefined: none).
 */
export function sandboxReachableTmpDir(): string | undefined {
  const ids = sandboxIds();
  if (!ids) return os.tmpdir();
  return [os.tmpdir(), '/tmp', '/var/tmp'].find((dir) => fs.existsSync(dir) && canEnter(dir, ids));
}
