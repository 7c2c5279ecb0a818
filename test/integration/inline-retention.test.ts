// Inline-run retention (SPEC 3.2, 8.4) on Temporal's time-skipping test server, with the real
// purge activity on the test stack's Postgres: after `retention_days` the temporary package is
// emptied and the run's logs deleted while the run record stays readable; a live run of the
// package postpones the purge by an hour.
import { Client, Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createPurgeInlinePackageActivity, type PurgeOutcome } from '../../activities/purge-inline-package.ts';
import { createKnex } from '../../shared/db/knex.ts';
import { findBinary } from '../../temporal/cli.ts';
import { uniqueScope } from '../fixtures/packages/build.ts';
import { newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { agentManifest } from '../support/packages.ts';
import { stack } from '../support/stack.ts';
import { startTestWorker, workerEnv, workflowBundle } from '../support/worker.ts';

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;

describe('inline-run retention (time-skipping)', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let api: TestApi;
  let model: FakeModel;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let knex: Knex;

  before(async () => {
    env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: findBinary('temporal-test-server') } } });
    model = await new FakeModel().start();
    model.setFallback(() => toolCall('output', { summary: 'kept' }));
    api = await startTestApi(workerEnv());
    worker = await startTestWorker(); // finishes the runs on the real dev server
    org = await newOrg(api, 'retention');
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    knex = createKnex(stack().databaseUrl, { min: 0, max: 2 });
  });
  after(async () => {
    await knex?.destroy();
    await worker?.stop();
    await api?.close();
    await model?.stop();
    await env?.teardown();
  });

  /** An inline run finished through the fake model, with a log line of the agent's own. */
  async function finishedInlineRun(marker: string) {
    model.script(marker, [() => toolCall('log', { level: 'info', message: `log of ${marker}` }), () => toolCall('output', { summary: marker })]);
    const manifest = agentManifest({ name: `${uniqueScope('ret')}/agent` });
    const res = await org.client.post('/api/runs/inline', { manifest, prompt: 'Secret prompt.', input: { marker } });
    expect(res.status, res.text).to.equal(201);
    const done = await org.client.get(`/api/runs/${res.body.id}?wait=30`);
    expect(done.body.status, done.body.error).to.equal('success');
    // The run's workflow is done too (its agent writes `success` before the workflow finishes), so
    // nothing of the run changes after this.
    const connection = await Connection.connect({ address: stack().temporalAddress });
    await new Client({ connection }).workflow.getHandle(res.body.id).result();
    await connection.close();
    const { package_id: packageId } = await knex('runs').where({ id: res.body.id }).first('package_id');
    expect(await knex('run_logs').where({ run_id: res.body.id }).pluck('message')).to.include(`log of ${marker}`);
    return { run: done.body, packageId: packageId as string };
  }

  /** Executes purgeInlinePackage on the time-skipping server; `onAttempt` sees each attempt's outcome. */
  async function purge(packageId: string, onAttempt: (outcome: PurgeOutcome) => Promise<void> = async () => {}) {
    const real = createPurgeInlinePackageActivity({ knex });
    const attempts: Array<{ at: number; outcome: PurgeOutcome }> = [];
    const taskQueue = `purge-${Math.random().toString(36).slice(2)}`;
    const w = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: {
        async purgeInlinePackage(input: { packageId: string }) {
          const outcome = await real.purgeInlinePackage(input);
          attempts.push({ at: await env.currentTimeMs(), outcome });
          await onAttempt(outcome);
          return outcome;
        },
      },
    });
    const start = await env.currentTimeMs();
    const result = await w.runUntil(
      env.client.workflow.execute('purgeInlinePackage', { taskQueue, workflowId: `purge:${packageId}`, args: [{ packageId, retentionDays: 30 }] }),
    );
    return { result, attempts: attempts.map((a) => ({ ...a, at: a.at - start })) };
  }

  it('empties the package and deletes the logs after retention_days, keeping the run record', async () => {
    const { run, packageId } = await finishedInlineRun('retention-main');
    const { result, attempts } = await purge(packageId);
    expect(result).to.equal('purged');
    expect(attempts).to.have.length(1);
    expect(attempts[0].at).to.be.at.least(30 * DAY);

    const pkg = await knex('packages').where({ id: packageId }).first();
    expect(pkg).to.include({ ephemeral: true, draft_revision: 2 });
    expect(pkg.draft_manifest).to.deep.equal({});
    expect(pkg.draft_files).to.deep.equal({});
    const versions = await knex('package_versions').where({ package_id: packageId }).select('manifest', 'files');
    expect(versions).to.deep.equal([{ manifest: {}, files: {} }]);
    expect(JSON.stringify(pkg) + JSON.stringify(versions)).not.to.contain('Secret prompt.');
    expect(await knex('run_logs').where({ run_id: run.id }).count({ n: '*' })).to.deep.equal([{ n: 0 }]);

    const read = await org.client.get(`/api/runs/${run.id}`);
    expect(read.status).to.equal(200);
    expect(read.body).to.deep.include({ packageId: run.packageId, version: '1.0.0', status: 'success', input: { marker: 'retention-main' } });
    expect(read.body.result).to.deep.equal({ output: { summary: 'retention-main' } });
    expect((await org.client.get(`/api/runs/${run.id}/logs`)).body.data).to.deep.equal([]);

    // Idempotent: purging again changes nothing more; an unknown package is gone.
    const activity = createPurgeInlinePackageActivity({ knex });
    expect(await activity.purgeInlinePackage({ packageId })).to.equal('purged');
    expect((await knex('packages').where({ id: packageId }).first()).draft_manifest).to.deep.equal({});
    expect(await activity.purgeInlinePackage({ packageId: 'pkg_none' })).to.equal('gone');
  });

  it('postpones the purge by an hour while a run of the package is live', async () => {
    const { run, packageId } = await finishedInlineRun('retention-busy');
    // The run is made live again; it "ends" once the first purge attempt has been turned away.
    await knex('runs').where({ id: run.id }).update({ status: 'running', finished_at: null });
    const { result, attempts } = await purge(packageId, async (outcome) => {
      if (outcome === 'busy') await knex('runs').where({ id: run.id }).update({ status: 'success', finished_at: new Date() });
    });
    expect(result).to.equal('purged');
    expect(attempts.map((a) => a.outcome)).to.deep.equal(['busy', 'purged']);
    expect(attempts[0].at).to.be.at.least(30 * DAY);
    expect(attempts[1].at - attempts[0].at).to.be.within(HOUR, HOUR + 5000);
    expect(await knex('run_logs').where({ run_id: run.id }).count({ n: '*' })).to.deep.equal([{ n: 0 }]);
  });
});
