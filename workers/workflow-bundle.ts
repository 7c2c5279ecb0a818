// The workflow bundle a worker process runs, built once and kept on disk (issue 18): webpack runs
// in a child process (workers/build-workflow-bundle.ts) only when no bundle matches, so a worker
// never holds webpack, its caches or a second copy of the code, and one bundle serves both
// workflow task queues (`agent-runs`, `platform`).
//
// A bundle lives in node_modules/.cache/workflow-bundles/<key>/, the key naming what was asked
// for (the entry of the enabled modules, the tracing interceptors, the SDK's version). Beside it a
// manifest lists every file webpack read, with its SHA-256 (and the paths webpack reports it
// looked for and did not find): a bundle is used only while each file still has its hash, so an
// edit to a workflow, to anything a workflow imports (a new import edits the importer) or to a
// bundled package rebuilds it.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Logger } from '../shared/log.ts';
import type { ModuleName } from '../shared/modules.ts';
import { PROJECT_ROOT } from '../shared/project-root.ts';
import { workflowEntry } from './workflow-entry.ts';

export const WORKFLOW_BUNDLE_CACHE = path.join(PROJECT_ROOT, 'node_modules', '.cache', 'workflow-bundles');
/** workers/tracing.ts's WORKFLOW_TRACING_MODULE (not imported: that module loads OpenTelemetry). */
const WORKFLOW_TRACING_MODULE = path.join(PROJECT_ROOT, 'workflows', 'tracing-interceptors.ts');
const SDK_VERSION: string = createRequire(import.meta.url)('@temporalio/worker/package.json').version;

/** What a bundle is built from; its key names it. */
export interface BundleSpec {
  workflowsPath: string;
  workflowInterceptorModules: string[];
  /**
   * The inline source map (the SDK requires one): line-level mappings without the sources' text
   * (they are on disk). Workflow stack traces still name the TypeScript file and line; each
   * workflow thread's source-map consumer holds about 1 MB instead of 4 to 10, and the bundle is
   * 0.6 MB instead of 1.7.
   */
  devtool: 'inline-nosources-cheap-module-source-map';
  sdk: string;
}

export interface BundleManifest {
  spec: BundleSpec;
  /** The bundle's file name in the key's directory. */
  bundle: string;
  /** Each file webpack read, with its SHA-256. */
  files: Record<string, string>;
  /** Paths webpack reports it looked for and did not find (a file created there could change the bundle). */
  missing: string[];
}

export function bundleSpec(modules: ReadonlySet<ModuleName>, tracing: boolean): BundleSpec {
  return {
    workflowsPath: workflowEntry(modules),
    workflowInterceptorModules: tracing ? [WORKFLOW_TRACING_MODULE] : [],
    devtool: 'inline-nosources-cheap-module-source-map',
    sdk: SDK_VERSION,
  };
}

export function bundleDir(spec: BundleSpec): string {
  return path.join(WORKFLOW_BUNDLE_CACHE, createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 16));
}

const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** Why the bundle in `dir` cannot be used, or undefined when it can. */
export function staleReason(dir: string): string | undefined {
  let manifest: BundleManifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  } catch {
    return 'no bundle yet';
  }
  if (!fs.existsSync(path.join(dir, manifest.bundle))) return 'bundle file missing';
  for (const [file, hash] of Object.entries(manifest.files)) {
    try {
      if (sha256(file) !== hash) return `${path.relative(PROJECT_ROOT, file)} changed`;
    } catch {
      return `${path.relative(PROJECT_ROOT, file)} removed`;
    }
  }
  for (const file of manifest.missing) if (fs.existsSync(file)) return `${path.relative(PROJECT_ROOT, file)} appeared`;
  return undefined;
}

/**
 * The bundle for these modules (and the tracing interceptors when traced), as a path for
 * `WorkerOptions.workflowBundle`: the cached one when its sources are unchanged, otherwise built
 * first by a child process (a few seconds).
 */
export async function cachedWorkflowBundle(opts: { modules: ReadonlySet<ModuleName>; tracing: boolean; log: Logger }): Promise<{ codePath: string }> {
  const { codePath } = await ensureWorkflowBundle(bundleSpec(opts.modules, opts.tracing), opts.log);
  return { codePath };
}

/** The bundle of `spec`, built first when there is none or its sources changed (`built`). */
export async function ensureWorkflowBundle(spec: BundleSpec, log: Logger): Promise<{ codePath: string; built: boolean }> {
  const dir = bundleDir(spec);
  const stale = staleReason(dir);
  if (stale) {
    const t0 = Date.now();
    log.info({ reason: stale }, 'bundling workflows');
    await buildInChild(spec, dir);
    const still = staleReason(dir);
    if (still) throw new Error(`the workflow bundle just built is unusable: ${still}`);
    log.info({ ms: Date.now() - t0 }, 'workflows bundled');
  }
  const manifest: BundleManifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  return { codePath: path.join(dir, manifest.bundle), built: stale !== undefined };
}

function buildInChild(spec: BundleSpec, dir: string): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', path.join(PROJECT_ROOT, 'workers', 'build-workflow-bundle.ts'), JSON.stringify(spec), dir],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-8000);
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`bundling the workflows failed (${signal ?? `exit code ${code}`}):\n${stderr.trim()}`));
    });
  });
}
