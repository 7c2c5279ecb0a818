// What a suite needs to watch runs end and their webhooks arrive: a fake model whose every
// unscripted turn writes `output`, an HTTPS receiver that the API and the worker trust through
// NODE_EXTRA_CA_CERTS, the API and an in-process worker.
import { startTestApi, type TestApi } from './api.ts';
import { FakeModel, toolCall } from './fake-model.ts';
import { HttpsReceiver } from './receiver.ts';
import { startTestWorker, workerEnv } from './worker.ts';

export interface RunServices {
  api: TestApi;
  model: FakeModel;
  receiver: HttpsReceiver;
  worker: Awaited<ReturnType<typeof startTestWorker>>;
  stop(): Promise<void>;
}

export async function startRunServices(options: { output: Record<string, unknown>; apiEnv?: Record<string, string>; workerEnv?: Record<string, string> }): Promise<RunServices> {
  const receiver = await new HttpsReceiver().start();
  const model = await new FakeModel().start();
  model.setFallback(() => toolCall('output', options.output));
  const trust = { NODE_EXTRA_CA_CERTS: receiver.caFile };
  const api = await startTestApi(workerEnv({ ...trust, ...options.apiEnv }));
  const worker = await startTestWorker({ ...trust, ...options.workerEnv });
  return {
    api,
    model,
    receiver,
    worker,
    async stop() {
      await worker.stop();
      await api.close();
      await model.stop();
      await receiver.stop();
    },
  };
}
