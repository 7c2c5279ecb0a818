// First step of `npm run start:prod`, `start:api`, `start:worker` and `migrate`: the service runs
// its TypeScript on Node's type stripping and re-executes itself with `process.execve`, so an
// older Node would fail on the first `.ts` file with a message about file extensions. Plain
// JavaScript on purpose: it has to run on whatever Node is on the PATH to say so plainly.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const wanted = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node; // ">=24"
const min = Number(/^>=\s*(\d+)/.exec(wanted)?.[1]);
const major = Number(process.versions.node.split('.')[0]);
if (!(major >= min)) {
  console.error(
    `This service needs Node.js ${min} or newer (package.json engines "${wanted}"); ` +
      `the \`node\` on the PATH is ${process.version} (${process.execPath}). ` +
      `Install Node.js ${min} (e.g. the node:${min} container image) or put it first on the PATH. ` +
      '`npm start` (development) runs on the Node it installs from npm itself.',
  );
  process.exit(1);
}
