// `npm start`: the whole service on embedded defaults (DESIGN.md section 6). Postgres and the
// Temporal dev server are started unless DATABASE_URL / TEMPORAL_ADDRESS point elsewhere;
// then migrations, one worker and the API. Ctrl-C stops every child cleanly.
// `npm run start:prod` runs it with `--production`: README.md, "Production".
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from './shared/config.ts';
import { createKnex, migrateLatest } from './shared/db/knex.ts';
import { armBootstrap } from './shared/identity/bootstrap.ts';
import { waitForHealthy } from './shared/stack/health.ts';
import { PROJECT_ROOT } from './shared/project-root.ts';
import { startTemporalDevServer } from './temporal/dev-server.ts';

const STEPS = 6;
let step = 0;
const say = (msg: string) => console.log(`[start ${++step}/${STEPS}] ${msg}`);
const note = (msg: string) => console.log(`           ${msg}`);

/**
 * `--production`: Postgres and Temporal are the operator's (no dev server, whose CLI is not installed), and the key too (one
 * generated into DATA_DIR dies with a container's disk, and replicas need the same).
 */
const production = process.argv.includes('--production');

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
  const missing = production ? ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'SECRETS_KEY'].filter((name) => !process.env[name]) : [];
  if (missing.length)
    throw new ConfigError(
      `${missing.join(', ')} must be set for \`npm run start:prod\`, which starts no embedded Postgres or Temporal and generates no secrets key`,
    );
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`configuration error: ${err.message}`);
    process.exit(1);
  }
  throw err;
}

const stops: Array<() => Promise<void>> = [];
/** The current API and worker processes, by name. */
const children = new Map<string, ChildProcess>();
const restartTimers = new Set<NodeJS.Timeout>();
/** Every process group we started and that may still run (API, worker, Temporal, Postgres), for a forced stop. */
const groups = new Set<number>();
/** Process ids for people and tests: `$DATA_DIR/pids.json`, rewritten on every (re)start. */
const pids: Record<string, number | undefined> = { launcher: process.pid };
const logToFiles = config.logFormat === 'file';
const logDir = path.join(config.dataDir, 'logs');
let stopping = false;
let stoppingSince = 0;

function writePids(): void {
  try {
    const file = path.join(config.dataDir, 'pids.json');
    fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(pids)}\n`);
    fs.renameSync(`${file}.tmp`, file); // readers never see half a file
  } catch {}
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {}
}

function forceStop(): never {
  for (const pid of groups) killGroup(pid, 'SIGKILL');
  console.error('[stop] forced: every child killed');
  process.exit(1);
}

async function shutdown(code: number): Promise<never> {
  if (stopping) {
    // npm forwards the terminal's Ctrl-C a second time right away: only a later one forces.
    if (Date.now() - stoppingSince > 2000) forceStop();
    return new Promise(() => {});
  }
  stopping = true;
  stoppingSince = Date.now();
  for (const t of restartTimers) clearTimeout(t);
  console.log('\n[stop] stopping API and worker...');
  await Promise.all(
    [...children.values()].map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once('exit', () => resolve());
          c.kill('SIGTERM');
          setTimeout(() => c.kill('SIGKILL'), 15_000).unref();
        }),
    ),
  );
  for (const stop of stops.reverse()) {
    try {
      await stop();
    } catch (err) {
      console.error(`[stop] ${(err as Error).message}`);
    }
  }
  // Whatever a child left in its process group goes with it.
  for (const pid of groups) killGroup(pid, 'SIGKILL');
  fs.rmSync(path.join(config.dataDir, 'pids.json'), { force: true });
  console.log('[stop] done');
  process.exit(code);
}
process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));
// A closed terminal, or a failure of the launcher itself, stops the children too: each runs in
// its own process group, so nothing else would.
process.on('SIGHUP', () => void shutdown(0));
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(event, (err) => {
    console.error(`[start] ${(err as Error)?.stack ?? String(err)}`);
    void shutdown(1);
  });
}

/** Node on one of our entry points, in a process group of its own: Ctrl-C reaches only this launcher, which stops children in order. */
function spawnNode(
  entry: string,
  env: NodeJS.ProcessEnv,
  args: string[] = [],
  stdout: 'inherit' | 'pipe' | number = 'inherit',
  stderr: 'inherit' | number = 'inherit',
): ChildProcess {
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', path.join(PROJECT_ROOT, entry), ...args], {
    env,
    stdio: ['ignore', stdout, stderr],
    detached: true,
  });
  const pid = child.pid;
  if (pid) {
    groups.add(pid);
    child.once('exit', () => {
      if (!stopping) {
        killGroup(pid, 'SIGKILL'); // e.g. the bundler's helpers of a killed worker
        groups.delete(pid);
      }
    });
  }
  return child;
}

/** The last lines of a child's log file, shown on the terminal when it exits. */
function tail(file: string, lines: number): string {
  try {
    const fd = fs.openSync(file, 'r');
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, 8192));
    fs.readSync(fd, buf, 0, buf.length, size - buf.length);
    fs.closeSync(fd);
    return buf.toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
/** A child that ran this long before dying starts its backoff over. */
const BACKOFF_RESET_MS = 60_000;

/**
 * API and worker: a child that dies is started again after a backoff (1 s doubling to 30 s; back
 * to 1 s after a minute of uptime); Postgres and Temporal stay up meanwhile. With LOG_FORMAT=file
 * its output goes to `$DATA_DIR/logs/<name>.log`.
 */
function superviseChild(name: string, entry: string, env: NodeJS.ProcessEnv): void {
  let delay = BACKOFF_MIN_MS;
  const logFile = path.join(logDir, `${name}.log`);
  const launch = () => {
    const out = logToFiles ? fs.openSync(logFile, 'a') : 'inherit';
    const child = spawnNode(entry, env, [], out, out);
    if (typeof out === 'number') fs.closeSync(out);
    const startedAt = Date.now();
    children.set(name, child);
    pids[name] = child.pid;
    writePids();
    child.once('exit', (code, signal) => {
      if (stopping) return;
      if (Date.now() - startedAt >= BACKOFF_RESET_MS) delay = BACKOFF_MIN_MS;
      const reason = signal ? `killed by ${signal}` : `exit code ${code}`;
      console.error(`[start] ${name} exited (${reason}); restarting in ${delay / 1000} s`);
      if (logToFiles) {
        const last = tail(logFile, 5);
        if (last) console.error(`${last.replace(/^/gm, `  ${name}| `)}\n  (full log: ${logFile})`);
      }
      const timer = setTimeout(() => {
        restartTimers.delete(timer);
        if (stopping) return;
        console.error(`[start] ${name}: restarting`);
        launch();
      }, delay);
      restartTimers.add(timer);
      delay = Math.min(delay * 2, BACKOFF_MAX_MS);
    });
  };
  launch();
}

async function startPostgresProcess(dataDir: string, preferredPort: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawnNode('shared/stack/postgres-process.ts', process.env, [dataDir, String(preferredPort)], 'pipe');
  const url = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (d: Buffer) => {
      buffer += d.toString();
      const m = /READY (\S+)/.exec(buffer);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`embedded Postgres exited (${code})`)));
  });
  // Postgres cannot heal under live children: losing it stops everything.
  child.once('exit', (code, signal) => {
    if (stopping) return;
    console.error(`[start] embedded Postgres exited (${signal ?? code}); stopping everything`);
    void shutdown(1);
  });
  pids.postgres = child.pid;
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

fs.mkdirSync(config.dataDir, { recursive: true });

/** Without SECRETS_KEY the embedded setup keeps its own key next to its data. */
function localSecretsKey(): string {
  const file = path.join(config.dataDir, 'secrets.key');
  if (!fs.existsSync(file)) fs.writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  return fs.readFileSync(file, 'utf8').trim();
}

async function main(): Promise<void> {
  let databaseUrl = config.databaseUrl;
  if (databaseUrl) {
    say('Postgres: using DATABASE_URL');
  } else {
    say(`Postgres: starting embedded server (data in ${path.join(config.dataDir, 'pg')})...`);
    const pg = await startPostgresProcess(path.join(config.dataDir, 'pg'), config.pgPort);
    stops.push(pg.stop);
    databaseUrl = pg.url;
    const port = Number(new URL(pg.url).port);
    note(port === config.pgPort ? `port ${port}` : `port ${config.pgPort} is busy: using ${port}`);
  }

  let temporalAddress = config.temporalAddress;
  let temporalUi = config.temporalUiUrl ?? null;
  if (temporalAddress) {
    say(`Temporal: using ${temporalAddress}`);
  } else {
    say('Temporal: starting dev server (temporal server start-dev)...');
    const t = await startTemporalDevServer({
      cliPath: config.temporalCliPath,
      preferredPort: config.temporalPort,
      preferredUiPort: config.temporalUiPort,
      dbFile: path.join(config.dataDir, 'temporal.db'),
      ui: true,
      namespace: config.temporalNamespace,
      logFile: path.join(config.dataDir, 'temporal.log'),
    });
    stops.push(() => t.stop());
    const tpid = t.process.pid;
    if (tpid) groups.add(tpid);
    pids.temporal = tpid;
    t.process.once('exit', (code, signal) => {
      if (stopping) return;
      console.error(`[start] Temporal dev server exited (${signal ?? code}); stopping everything (log: ${path.join(config.dataDir, 'temporal.log')})`);
      void shutdown(1);
    });
    temporalAddress = t.address;
    temporalUi = t.uiUrl;
    note(`frontend ${t.address}, search attributes registered`);
  }

  say('Database: applying migrations...');
  const knex = createKnex(databaseUrl, { min: 0, max: 2 });
  const applied = await migrateLatest(knex, (m) => note(m));
  if (!applied.length) note('up to date');
  const bootstrapToken = await armBootstrap(knex, config.bootstrapToken);
  await knex.destroy();

  // The dev server's Web UI too: the console links each run to its workflow there.
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    SECRETS_KEY: process.env.SECRETS_KEY || localSecretsKey(),
    ...(temporalUi ? { TEMPORAL_UI_URL: temporalUi } : {}),
  };
  say('Worker: starting...');
  superviseChild('worker', 'workers/main.ts', env);

  say(`API: starting on port ${config.port}...`);
  superviseChild('api', 'api/main.ts', env);
  const apiUrl = `http://localhost:${config.port}`;
  await waitForHealthy(`${apiUrl}/api/health`, 60_000);
  if (logToFiles) note(`API and worker logs: ${logDir}/{api,worker}.log (LOG_FORMAT=json prints them here)`);

  say('Ready.');
  console.log('');
  console.log(`  API          ${config.publicUrl}  (health: ${apiUrl}/api/health, docs: ${apiUrl}/api/docs)`);
  console.log(`  Temporal UI  ${temporalUi ?? '(external cluster: set TEMPORAL_UI_URL to show it here)'}`);
  if (bootstrapToken) {
    console.log('');
    console.log('  Empty database: create the first owner with');
    console.log(
      `  curl -X POST ${apiUrl}/api/auth/bootstrap/redeem -H 'content-type: application/json' \\\n    -d \
'{"token":"${bootstrapToken}","email":"you@example.com","password":"choose-a-password","name":"You"}'`,
    );
  }
  console.log('');
  console.log('  Ctrl-C stops everything.');
}

try {
  if (logToFiles) fs.mkdirSync(logDir, { recursive: true });
  writePids();
  await main();
} catch (err) {
  console.error(`[start] ${(err as Error).message}`);
  await shutdown(1);
}
