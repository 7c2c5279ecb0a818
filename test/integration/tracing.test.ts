// OpenTelemetry traces (DESIGN.md 8): one trace from the API request that launches a run through
// the workflow start, the workflow, its activities and the sidecar's model call, every span with
// the run id (and those made under the request, the request id). Tracing is injected into this
// test's API and worker only (an in-memory exporter), never installed as a global.
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { bundleWorkflowCode } from '@temporalio/worker';
import { expect } from 'chai';
import { type ApiServer, startApiServer } from '../../api/server.ts';
import { loadConfig } from '../../shared/config.ts';
import { createKnex } from '../../shared/db/knex.ts';
import { createLogger } from '../../shared/log.ts';
import { createTracing, type Tracing } from '../../shared/observability/tracing.ts';
import { createServiceWorkers, type ServiceWorkers, WORKFLOWS_PATH } from '../../workers/service-workers.ts';
import { WORKFLOW_TRACING_MODULE } from '../../workers/tracing.ts';
import { newOrg } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { stack } from '../support/stack.ts';
import { quietTemporalRuntime, TEST_SECRETS_KEY, workerEnv } from '../support/worker.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('tracing', function () {
  this.timeout(120_000);
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let api: ApiServer;
  let model: FakeModel;
  let service: ServiceWorkers;
  let running: Promise<void>;
  let knex: ReturnType<typeof createKnex>;
  const apiLines: Array<Record<string, unknown>> = [];

  before(async () => {
    quietTemporalRuntime();
    tracing = createTracing({ serviceName: 'test', exporter });
    model = await new FakeModel().start();
    model.setFallback(() => toolCall('output', { summary: 'traced' }));
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', SECRETS_KEY: TEST_SECRETS_KEY, ...workerEnv() });
    const s = stack();
    const log = createLogger('silent', 'tracing-test');
    const apiLog = createLogger('debug', 'tracing-test', { write: (line: string) => void apiLines.push(JSON.parse(line)) });
    api = await startApiServer(config, { databaseUrl: s.databaseUrl, temporalAddress: s.temporalAddress, log: apiLog, tracing });
    knex = createKnex(s.databaseUrl, { min: 0, max: 4 });
    // A traced worker bundles the tracing workflow interceptors.
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      workflowInterceptorModules: [WORKFLOW_TRACING_MODULE],
      logger: { trace() {}, debug() {}, info() {}, log() {}, warn: console.warn, error: console.error },
    });
    service = await createServiceWorkers({ config, knex, log, temporalAddress: s.temporalAddress, workflowBundle, tracing });
    running = service.run();
  });
  after(async () => {
    service?.shutdown();
    await running;
    await service?.close();
    await knex?.destroy();
    await api?.close();
    await model?.stop();
    await tracing?.shutdown();
  });

  it('follows a run in one trace: API request -> workflow start -> workflow -> activities -> model call', async () => {
    const org = await newOrg(api, 'tracing');
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    await importAgent(org.client, { name: '@tracing/agent' });
    exporter.reset();
    const launched = await org.client.post('/api/agents/@tracing/agent/run', { input: {} });
    expect(launched.status, launched.text).to.equal(201);
    const runId = launched.body.id as string;
    const requestId = launched.headers.get('request-id')!;
    const done = await org.client.get(`/api/runs/${runId}?wait=30`);
    expect(done.body.status, done.body.error).to.equal('success');

    const request = exporter.getFinishedSpans().find((s) => s.name === 'POST /api/agents/:scope/:name/run');
    expect(request, 'the request span').to.exist;
    const traceId = request!.spanContext().traceId;
    const inTrace = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    const names = () => inTrace().map((s) => s.name);
    // Workflow spans leave the sandbox when the workflow completes.
    for (let i = 0; i < 50 && !names().includes('RunWorkflow:runAgent'); i++) await sleep(100);

    const spans = inTrace();
    const byName = (name: string) => spans.find((s) => s.name === name);
    for (const name of [
      'POST /api/agents/:scope/:name/run',
      'StartWorkflow:runAgent',
      'RunWorkflow:runAgent',
      'StartActivity:executeAgent',
      'RunActivity:executeAgent',
      'model call',
    ]) {
      expect(byName(name), `${name} in ${JSON.stringify(names())}`).to.exist;
    }
    expect(request!.attributes).to.include({
      'request.id': requestId,
      'run.id': runId,
      'http.route': '/api/agents/:scope/:name/run',
      'http.response.status_code': 201,
    });
    // Parents: request <- workflow start <- workflow <- activity start <- activity <- model call.
    const parentOf = (name: string) => spans.find((s) => s.spanContext().spanId === byName(name)!.parentSpanId)?.name;
    expect(parentOf('StartWorkflow:runAgent')).to.equal('POST /api/agents/:scope/:name/run');
    expect(parentOf('RunWorkflow:runAgent')).to.equal('StartWorkflow:runAgent');
    expect(parentOf('StartActivity:executeAgent')).to.equal('RunWorkflow:runAgent');
    expect(parentOf('RunActivity:executeAgent')).to.equal('StartActivity:executeAgent');
    expect(parentOf('model call')).to.equal('RunActivity:executeAgent');
    // Every span of the run carries its run id, and (all came of the request) its request id.
    for (const span of spans) {
      expect(span.attributes['run.id'], `run.id of ${span.name}`).to.equal(runId);
      expect(span.attributes['request.id'], `request.id of ${span.name}`).to.equal(requestId);
    }
    expect(byName('model call')!.attributes).to.include({ 'gen_ai.request.model': 'm' });
    // The request's log line carries its request id, trace id and span id.
    const line = apiLines.find((l) => l.msg === 'request' && l.requestId === requestId);
    expect(line, 'the request log line').to.exist;
    expect(line).to.include({ traceId, spanId: request!.spanContext().spanId });
  });

  // Tracing is injected, never the global provider: were it global, this second API's request
  // would reach the traced exporter.
  it('records nothing for an API started without a tracer beside a traced one (no global provider)', async () => {
    const before = exporter.getFinishedSpans().length;
    const untraced = await startApiServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', SECRETS_KEY: TEST_SECRETS_KEY }), {
      databaseUrl: stack().databaseUrl,
      temporalAddress: stack().temporalAddress,
      log: createLogger('silent', 'untraced'),
    });
    try {
      expect((await fetch(`${untraced.url}/api/health`)).status).to.equal(200);
    } finally {
      await untraced.close();
    }
    expect(
      exporter
        .getFinishedSpans()
        .slice(before)
        .map((s: ReadableSpan) => s.name),
    ).not.to.include('GET /api/health');
  });
});
