// What the webhook delivery tests share: SPEC 6.3's ladder on Temporal's time-skipping test
// server with a scripted attempt activity (webhook-ladder, webhook-outbox), and the real stack
// for tests that kill workers mid-delivery (webhook-durability, webhook-outbox).
import { Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import type { AttemptOutcome } from '../../activities/webhooks/delivery.ts';
import { findBinary } from '../../temporal/cli.ts';
import { startTestApi, type TestApi } from './api.ts';
import { HttpsReceiver } from './receiver.ts';
import { stack } from './stack.ts';
import { type startTestWorker, workerEnv, workflowBundle } from './worker.ts';

export const S = 1000;
export const M = 60 * S;
export const H = 60 * M;

/** Registers before/after hooks for a time-skipping environment; the getter reads it in a test. */
export function timeSkippingEnv(): () => TestWorkflowEnvironment {
  let env: TestWorkflowEnvironment | undefined;
  before(async () => {
    env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: findBinary('temporal-test-server') } } });
  });
  after(() => env?.teardown());
  return () => env!;
}

/** A worker on a fresh task queue whose `deliverWebhookAttempt` answers per `script`, recording each attempt's number and (skipped) time. */
export async function scriptedAttempts(env: TestWorkflowEnvironment, script: (attempt: number) => AttemptOutcome | Promise<AttemptOutcome>) {
  const times: number[] = [];
  const numbers: number[] = [];
  const taskQueue = `attempts-${Math.random().toString(36).slice(2)}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: {
      async deliverWebhookAttempt(input: { attempt: number }) {
        times.push(await env.currentTimeMs());
        numbers.push(input.attempt);
        return script(input.attempt);
      },
    },
  });
  return { worker, taskQueue, times, numbers };
}

/** Each wait is the ladder's step, give or take the workflow task round trip. */
export function expectWaits(waits: number[], expected: number[]): void {
  expect(waits).to.have.length(expected.length);
  for (const [i, w] of waits.entries()) expect(w, `wait ${i + 1}`).to.be.within(expected[i], expected[i] + 2 * S);
}

export interface CrashStack {
  api: TestApi;
  receiver: HttpsReceiver;
  connection: Connection;
  /** The test's worker, stopped after the suite when set. */
  worker?: Awaited<ReturnType<typeof startTestWorker>>;
}

/** Registers before/after hooks for an API, an HTTPS receiver its webhooks trust and a Temporal connection. */
export function crashStack(): CrashStack {
  const s = {} as CrashStack;
  before(async () => {
    s.receiver = await new HttpsReceiver().start();
    s.api = await startTestApi(workerEnv({ NODE_EXTRA_CA_CERTS: s.receiver.caFile }));
    s.connection = await Connection.connect({ address: stack().temporalAddress });
  });
  after(async () => {
    await s.worker?.stop();
    await s.connection?.close();
    await s.api?.close();
    await s.receiver?.stop();
  });
  return s;
}
