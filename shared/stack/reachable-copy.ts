// Root may clone the project under a folder only root can enter (/root is 0700 in most containers
// and VMs), yet some of what it holds runs as an unprivileged user: the embedded Postgres (as
// `postgres`) and the sandboxes (as `nobody`, with the worker's Node). What such a user cannot
// reach in place is copied once, into a root-owned 0755 folder under a shared temporary root,
// named after what it holds so that later starts (and other clones) reuse it.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Ids {
  uid: number;
  gid: number;
}

/** Whether `ids` (this process's user when undefined) can execute `bin`: it answers `--version`. */
export function canExecute(bin: string, ids: Ids | undefined): boolean {
  const r = spawnSync(bin, ['--version'], { ...ids, stdio: 'ignore', timeout: 10_000 });
  return !r.error && r.status === 0;
}

/** Whether `ids` can enter `dir` (every folder on its path traversable). */
export function canEnter(dir: string, ids: Ids): boolean {
  const r = spawnSync('/bin/sh', ['-c', 'cd "$1"', 'sh', dir], { ...ids, stdio: 'ignore', timeout: 10_000 });
  return !r.error && r.status === 0;
}

/** Folders under which root may put files for another user: world-traversable, root-owned or sticky. */
export function sharedRoots(): string[] {
  return [...new Set([os.tmpdir(), '/var/tmp', '/tmp'])].filter((d) => fs.existsSync(d));
}

/** A folder of ours that only root writes: refuse one somebody else created first. */
export function trustedDir(dir: string): boolean {
  const st = fs.lstatSync(dir);
  return st.isDirectory() && st.uid === 0 && (st.mode & 0o022) === 0;
}

export interface ReachableCopy {
  /** `<root>/<name>/<entry>`, where `works` said yes; undefined when no shared root did. */
  copy?: string;
  /** The folders tried, for an error message. */
  tried: string[];
}

/**
 * `source` (a file or a folder) copied to `<root>/<name>/<entry>` under the first shared root
 * that `ids` can enter and where `works(copy)`. The copy is staged and renamed into place, so a
 * concurrent start never sees half of it (the loser of a race drops its own), and reused while
 * `<root>/<name>/.complete` exists and the folder is root's alone. `name` must change with the
 * content (a version, a hash).
 */
export function reachableCopy(opts: { source: string; name: string; entry: string; ids: Ids; works: (copy: string) => boolean }): ReachableCopy {
  const tried: string[] = [];
  for (const root of sharedRoots()) {
    const target = path.join(root, opts.name);
    tried.push(target);
    try {
      if (!canEnter(root, opts.ids)) continue;
      if (!fs.existsSync(path.join(target, '.complete'))) {
        if (fs.existsSync(target)) fs.rmSync(target, { recursive: true, force: true });
        const staging = `${target}.${process.pid}.${randomBytes(4).toString('hex')}`;
        fs.mkdirSync(staging, { mode: 0o755 });
        fs.chmodSync(staging, 0o755);
        // Folders on the entry's way are 0755 whatever root's umask (often 077).
        let dir = staging;
        for (const part of path
          .dirname(opts.entry)
          .split(path.sep)
          .filter((p) => p && p !== '.')) {
          dir = path.join(dir, part);
          fs.mkdirSync(dir, { mode: 0o755 });
          fs.chmodSync(dir, 0o755);
        }
        fs.cpSync(opts.source, path.join(staging, opts.entry), { recursive: true, verbatimSymlinks: true });
        fs.writeFileSync(path.join(staging, '.complete'), `${opts.source}\n`);
        try {
          fs.renameSync(staging, target);
        } catch {
          fs.rmSync(staging, { recursive: true, force: true }); // another process won the race
        }
      }
      if (!trustedDir(target)) continue;
      const copy = path.join(target, opts.entry);
      if (opts.works(copy)) return { copy, tried };
    } catch {}
  }
  return { tried };
}
