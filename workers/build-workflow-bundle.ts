// Builds one workflow bundle into the cache (workers/workflow-bundle.ts runs this as a child
// process, so webpack never loads into a worker): `node workers/build-workflow-bundle.ts <spec> <dir>`.
// The bundle file is named by its content; the manifest, written last and renamed into place,
// is what makes it current, so workers starting together may build side by side.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { BundleManifest, BundleSpec } from './workflow-bundle.ts';

const [specJson, dir] = process.argv.slice(2);
if (!specJson || !dir) {
  console.error('usage: node workers/build-workflow-bundle.ts <spec json> <cache dir>');
  process.exit(2);
}
const spec: BundleSpec = JSON.parse(specJson);
const startedAt = Date.now();
let files: string[] = [];
let missing: string[] = [];
const { code } = await bundleWorkflowCode({
  workflowsPath: spec.workflowsPath,
  workflowInterceptorModules: spec.workflowInterceptorModules,
  logger: { trace() {}, debug() {}, info() {}, log() {}, warn: console.warn, error: console.error },
  webpackConfigHook: (config) => ({
    ...config,
    devtool: spec.devtool,
    plugins: [
      ...(config.plugins ?? []),
      {
        apply(compiler) {
          compiler.hooks.done.tap('workflow-bundle-manifest', (stats) => {
            files = [...stats.compilation.fileDependencies];
            missing = [...stats.compilation.missingDependencies];
          });
        },
      },
    ],
  }),
});

const hash = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const manifestFiles: Record<string, string> = {};
for (const file of files.sort()) {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    continue; // the bundler's generated entry point, in memory only
  }
  if (!stat.isFile()) continue;
  // Edited while webpack ran: recorded as changed, so the next start builds again.
  manifestFiles[file] = stat.mtimeMs >= startedAt ? 'changed-during-build' : hash(fs.readFileSync(file));
}
const bundle = `bundle-${hash(code).slice(0, 16)}.js`;
const manifest: BundleManifest = { spec, bundle, files: manifestFiles, missing: missing.filter((p) => !fs.existsSync(p)).sort() };

fs.mkdirSync(dir, { recursive: true });
const tmp = (name: string) => path.join(dir, `.${name}.${process.pid}.tmp`);
fs.writeFileSync(tmp(bundle), code);
fs.renameSync(tmp(bundle), path.join(dir, bundle));
fs.writeFileSync(tmp('manifest.json'), `${JSON.stringify(manifest, null, 1)}\n`);
fs.renameSync(tmp('manifest.json'), path.join(dir, 'manifest.json'));
// Older bundles of this key go once no starting worker can still be about to read them.
for (const name of fs.readdirSync(dir)) {
  if (name === bundle || name === 'manifest.json') continue;
  const file = path.join(dir, name);
  try {
    if (Date.now() - fs.statSync(file).mtimeMs > 10 * 60_000) fs.rmSync(file, { force: true });
  } catch {}
}
