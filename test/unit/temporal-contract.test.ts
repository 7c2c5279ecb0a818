// The boundary around the Temporal contract (temporal/README.md, docs/architecture.md): what
// workflows and their callers share lives in temporal/contract/, so no caller loads workflow code
// and no workflow loads a starter (client-side code) or the Temporal client. Read from the
// imports Node would run (types stripped), following relative imports from each entry. And the
// starters start each workflow by a name and a signature from the contract
// (temporal/contract/workflows.ts), not by the workflow's own type: checked here to match.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import type * as contract from '../../temporal/contract/workflows.ts';
import * as bundled from '../../workflows/index.ts';
import { importSpecifiers } from '../support/import-specifiers.ts';

const SOURCE = /\.(ts|mjs|js)$/;

function filesUnder(dir: string): string[] {
  const full = path.join(PROJECT_ROOT, dir);
  return (fs.readdirSync(full, { recursive: true }) as string[]).filter((f) => SOURCE.test(f)).map((f) => path.join(full, f));
}

/** Every file `entries` load at run time through relative imports, and the packages they name. */
function loaded(entries: string[]): { files: Set<string>; packages: Map<string, string> } {
  const files = new Set<string>();
  const packages = new Map<string, string>();
  const queue = [...entries];
  while (queue.length) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const { specifier } of importSpecifiers(fs.readFileSync(file, 'utf8'), file.endsWith('.ts'))) {
      if (specifier.startsWith('.')) queue.push(path.resolve(path.dirname(file), specifier));
      else if (!packages.has(specifier)) packages.set(specifier, path.relative(PROJECT_ROOT, file));
    }
  }
  return { files, packages };
}

const relative = (files: Iterable<string>) => [...files].map((f) => path.relative(PROJECT_ROOT, f));

/** Each workflow the starters start, under its workflow type name, with the signature they start it by. */
interface Signatures {
  runAgent: contract.RunAgentWorkflow;
  remoteRun: contract.RemoteRunWorkflow;
  scheduledRun: contract.ScheduledRunWorkflow;
  bulkRuns: contract.BulkRunsWorkflow;
  purgeInlinePackage: contract.PurgeInlinePackageWorkflow;
  chatSession: contract.ChatSessionWorkflow;
  deliverWebhook: contract.DeliverWebhookWorkflow;
  webhookOutbox: contract.WebhookOutboxWorkflow;
  connectLogin: contract.ConnectLoginWorkflow;
  refreshConnection: contract.RefreshConnectionWorkflow;
  sweepExpiredFiles: contract.SweepExpiredFilesWorkflow;
}

// The compile-time half: a workflow that stops accepting its contract's input, or answers
// something else, fails the type check here.
const signatures: Signatures = {
  runAgent: bundled.runAgent,
  remoteRun: bundled.remoteRun,
  scheduledRun: bundled.scheduledRun,
  bulkRuns: bundled.bulkRuns,
  purgeInlinePackage: bundled.purgeInlinePackage,
  chatSession: bundled.chatSession,
  deliverWebhook: bundled.deliverWebhook,
  webhookOutbox: bundled.webhookOutbox,
  connectLogin: bundled.connectLogin,
  refreshConnection: bundled.refreshConnection,
  sweepExpiredFiles: bundled.sweepExpiredFiles,
};

/** The (signature type, workflow type name) pairs the starters start by: `start<T>('name', ...)`, or a schedule action's `workflowType`. */
function starts(): Array<{ file: string; signature: string; name: string }> {
  const found: Array<{ file: string; signature: string; name: string }> = [];
  for (const file of filesUnder(path.join('temporal', 'starters'))) {
    const text = fs.readFileSync(file, 'utf8');
    const rel = path.relative(PROJECT_ROOT, file);
    for (const m of text.matchAll(/\.(?:start|execute|signalWithStart)<(\w+)[^>]*>\('(\w+)'/g)) found.push({ file: rel, signature: m[1], name: m[2] });
    const actions = [...text.matchAll(/ScheduleOptionsStartWorkflowAction<(\w+)>/g)].map((m) => m[1]);
    const types = [...text.matchAll(/workflowType: '(\w+)'/g)].map((m) => m[1]);
    if (types.length) {
      expect(new Set(actions).size, `${rel}: one schedule action per starter`).to.equal(1);
      for (const name of types) found.push({ file: rel, signature: actions[0], name });
    }
  }
  return found;
}

describe('the Temporal contract boundary', () => {
  it('workflow code loads no starter and no Temporal client, worker or activity package', () => {
    const { files, packages } = loaded([path.join(PROJECT_ROOT, 'workflows', 'index.ts'), path.join(PROJECT_ROOT, 'workflows', 'tracing-interceptors.ts')]);
    expect(relative(files)).to.include('temporal/contract/runs.ts');
    expect(relative(files).filter((f) => f.startsWith('temporal/starters/'))).to.deep.equal([]);
    const refused = ['@temporalio/client', '@temporalio/worker', '@temporalio/activity'];
    expect([...packages].filter(([name]) => refused.some((r) => name === r || name.startsWith(`${r}/`)))).to.deep.equal([]);
  });

  it('the API, shared code and activities load no workflow code: names and definitions come from temporal/contract/', () => {
    const { files } = loaded([...filesUnder('api'), ...filesUnder('shared'), ...filesUnder('activities')]);
    expect(relative(files).filter((f) => f.startsWith('workflows/'))).to.deep.equal([]);
  });

  it('each starter starts a workflow by the name it is bundled under, with the signature named after it', () => {
    const found = starts();
    expect([...new Set(found.map((s) => s.name))].sort(), 'the workflows the starters start are the ones checked above').to.deep.equal(
      Object.keys(signatures).sort(),
    );
    for (const { file, signature, name } of found) {
      expect(signature, `${file}: ${name}`).to.equal(`${name[0].toUpperCase()}${name.slice(1)}Workflow`);
      expect((bundled as Record<string, unknown>)[name], `${file}: ${name} is exported by workflows/index.ts`).to.equal(signatures[name as keyof Signatures]);
    }
  });
});
