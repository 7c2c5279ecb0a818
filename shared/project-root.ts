// The folder this project lives in (package.json's), for paths to its own files: entry points
// the launcher and tests spawn, the sandbox's runtime, caches under node_modules/.cache. Node
// only: workflow code never imports it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
