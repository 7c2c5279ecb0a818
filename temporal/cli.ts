// Finds the `temporal` CLI (and the time-skipping test server): TEMPORAL_CLI_PATH, then the
// project-local install from PyPI's wheels (.tools/python/bin), then PATH.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../shared/project-root.ts';

const LOCAL_BIN = path.join(PROJECT_ROOT, '.tools', 'python', 'bin');

function onPath(name: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

export function findBinary(name: 'temporal' | 'temporal-test-server', override?: string): string {
  if (override) return override;
  const local = path.join(LOCAL_BIN, name);
  if (fs.existsSync(local)) return local;
  const found = onPath(name);
  if (found) return found;
  throw new Error(`${name} not found: set TEMPORAL_CLI_PATH or run \`npm start\` once to install it`);
}
