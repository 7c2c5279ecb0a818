// The workflow bundle a worker process loads from disk (workers/workflow-bundle.ts): built once by
// a child process, used as long as every file it was built from is unchanged, built again when
// one changes. The workflows here are plain JavaScript under
// node_modules/.cache (the bundler resolves @temporalio/workflow from there), so the project's
// own workflow sources are never touched.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { createLogger } from '../../shared/log.ts';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { type BundleSpec, bundleDir, ensureWorkflowBundle, staleReason } from '../../workers/workflow-bundle.ts';

describe('workflow bundle cache', function () {
  this.timeout(120_000);
  const dir = path.join(PROJECT_ROOT, 'node_modules', '.cache', `bundle-test-${process.pid}`);
  const entry = path.join(dir, 'workflows.js');
  const helper = path.join(dir, 'greeting.js');
  const spec: BundleSpec = {
    workflowsPath: entry,
    workflowInterceptorModules: [],
    devtool: 'inline-nosources-cheap-module-source-map',
    sdk: `test-${process.pid}`,
  };
  const log = createLogger('silent', 'bundle-test');

  before(() => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(helper, "export const greeting = 'first greeting';\n");
    fs.writeFileSync(entry, "import { greeting } from './greeting.js';\nexport async function greet() { return greeting; }\n");
  });
  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(bundleDir(spec), { recursive: true, force: true });
  });

  it('is built once, reused while its sources are unchanged, and built again when one changes', async () => {
    const first = await ensureWorkflowBundle(spec, log);
    expect(first.built).to.equal(true);
    expect(fs.readFileSync(first.codePath, 'utf8')).to.include('first greeting');

    const again = await ensureWorkflowBundle(spec, log);
    expect(again).to.deep.equal({ codePath: first.codePath, built: false });

    // A file the workflows import changes (not the entry itself).
    fs.writeFileSync(helper, "export const greeting = 'second greeting';\n");
    expect(staleReason(bundleDir(spec))).to.match(/greeting\.js changed/);
    const rebuilt = await ensureWorkflowBundle(spec, log);
    expect(rebuilt.built).to.equal(true);
    expect(rebuilt.codePath).not.to.equal(first.codePath);
    const code = fs.readFileSync(rebuilt.codePath, 'utf8');
    expect(code).to.include('second greeting');
    expect(code).not.to.include('first greeting');
  });
});
