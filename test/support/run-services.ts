// What a suite needs to run agents: a fake model whose every unscripted turn writes `output`, the
// API and an in-process worker (`startModelServices`), and for suites that watch webhooks arrive
// an HTTPS receiver that the API and the worker trust through NODE_EXTRA_CA_CERTS
// (`startRunServices`); `addFakeModel` makes the fake the default model of an organization.
import { type Client, startTestApi, type TestApi } from './api.ts';
import { FakeModel, toolCall } from './fake-model.ts';
import { HttpsReceiver } from './receiver.ts';
import { startTestWorker, workerEnv } from './worker.ts';

export interface ModelServices {
  api: TestApi;
  model: FakeModel;
  worker: Awaited<ReturnType<typeof startTestWorker>>;
  stop(): Promise<void>;
}

export interface RunServices extends ModelServices {
  receiver: HttpsReceiver;
}

interface ServiceOptions {
  /** What an unscripted turn writes with `output` (the fake model's own default: `{}`). */
  output?: Record<string, unknown>;
  apiEnv?: Record<string, string>;
  workerEnv?: Record<string, string>;
}

export async function startModelServices(options: ServiceOptions = {}): Promise<ModelServices> {
  const model = await new FakeModel().start();
  const { output } = options;
  if (output) model.setFallback(() => toolCall('output', output));
  const api = await startTestApi(workerEnv(options.apiEnv));
  const worker = await startTestWorker(options.workerEnv);
  return {
    api,
    model,
    worker,
    async stop() {
      await worker.stop();
      await api.close();
      await model.stop();
    },
  };
}

export async function startRunServices(options: ServiceOptions & { output: Record<string, unknown> }): Promise<RunServices> {
  const receiver = await new HttpsReceiver().start();
  const trust = { NODE_EXTRA_CA_CERTS: receiver.caFile };
  const services = await startModelServices({ output: options.output, apiEnv: { ...trust, ...options.apiEnv }, workerEnv: { ...trust, ...options.workerEnv } });
  return {
    ...services,
    receiver,
    async stop() {
      await services.stop();
      await receiver.stop();
    },
  };
}

/** Makes `model` the default model of the client's organization (`fields` add to or replace the defaults: costs, another model name). */
export async function addFakeModel(client: Client, model: FakeModel, fields: Record<string, unknown> = {}): Promise<void> {
  const res = await client.post('/api/models', {
    name: 'fake',
    provider: 'openai-compatible',
    baseUrl: model.url,
    model: 'fake-1',
    apiKey: 'sk-test',
    isDefault: true,
    ...fields,
  });
  if (res.status !== 201) throw new Error(`model create failed: ${res.status} ${res.text}`);
}
