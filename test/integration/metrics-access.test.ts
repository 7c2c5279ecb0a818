// DESIGN.md 8, issue 28: without METRICS_TOKEN, `GET /metrics` (API and worker) answers only
// requests whose connection comes from a loopback address; forwarding headers never make a
// request local. Reached over the machine's own non-loopback address to be seen as remote.
import os from 'node:os';
import { expect } from 'chai';
import { startTestApi, type TestApi } from '../support/api.ts';
import { expectProblem } from '../support/problem.ts';
import { startTestWorker } from '../support/worker.ts';

/** An address of this machine that is not loopback (IPv4 first), or undefined when it has none. */
function outsideAddress(): string | undefined {
  const all = Object.values(os.networkInterfaces()).flatMap((list) => list ?? []);
  const usable = all.filter((a) => !a.internal && !a.address.startsWith('fe80:'));
  const pick = usable.find((a) => a.family === 'IPv4') ?? usable[0];
  if (!pick) return undefined;
  return pick.family === 'IPv6' ? `[${pick.address}]` : pick.address;
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  const text = await res.text();
  const body = (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
  return { status: res.status, headers: res.headers, body, text };
}

describe('metrics access without METRICS_TOKEN', function () {
  this.timeout(60_000);
  const outside = outsideAddress();
  let api: TestApi;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let workerPort: number;

  before(async () => {
    // Both bound to every address, so the machine's outside address reaches them.
    api = await startTestApi({ HOST: '0.0.0.0' });
    worker = await startTestWorker({ HOST: '0.0.0.0', WORKER_METRICS_PORT: '0' });
    workerPort = Number(new URL(worker.metricsUrl!).port);
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
  });

  it('answers a loopback scraper on the API and on the worker', async () => {
    for (const url of [`http://127.0.0.1:${api.port}/metrics`, `http://127.0.0.1:${workerPort}/metrics`]) {
      const res = await get(url);
      expect(res.status, url).to.equal(200);
      expect(res.text).to.include('process_cpu_user_seconds_total');
    }
  });

  it('refuses a request from a non-loopback address with a 403 problem, on the API and on the worker', async function () {
    if (!outside) this.skip(); // a machine with loopback only cannot be reached from elsewhere either
    const apiRes = await get(`http://${outside}:${api.port}/metrics`);
    expectProblem(apiRes, 403, 'forbidden');
    expect(apiRes.body.detail).to.include('METRICS_TOKEN');
    expect(apiRes.text).not.to.include('process_cpu_user_seconds_total');

    const workerRes = await get(`http://${outside}:${workerPort}/metrics`);
    expect(workerRes.status).to.equal(403);
    expect(workerRes.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(workerRes.body).to.include({ status: 403, code: 'forbidden' });
    expect(workerRes.body.detail).to.include('METRICS_TOKEN');
  });

  it('never takes a forwarding header as a loopback source, even with TRUST_PROXY', async function () {
    if (!outside) this.skip();
    const trusting = await startTestApi({ HOST: '0.0.0.0', TRUST_PROXY: '1' });
    try {
      const spoofs: Record<string, string>[] = [{ 'x-forwarded-for': '127.0.0.1' }, { forwarded: 'for=127.0.0.1' }, { 'x-real-ip': '::1' }];
      for (const headers of spoofs) {
        const res = await get(`http://${outside}:${trusting.port}/metrics`, headers);
        expectProblem(res, 403, 'forbidden');
      }
      // A proxy on this machine relaying someone else: the connection is loopback, the client is not.
      const relayed = await get(`http://127.0.0.1:${trusting.port}/metrics`, { 'x-forwarded-for': '203.0.113.7' });
      expectProblem(relayed, 403, 'forbidden');
    } finally {
      await trusting.close();
    }
    const relayedToWorker = await get(`http://127.0.0.1:${workerPort}/metrics`, { 'x-forwarded-for': '203.0.113.7' });
    expect(relayedToWorker.status).to.equal(403);
  });

  it('with METRICS_TOKEN, answers the bearer from any address', async function () {
    if (!outside) this.skip();
    const guarded = await startTestApi({ HOST: '0.0.0.0', METRICS_TOKEN: 'scrape-me' });
    try {
      const ok = await get(`http://${outside}:${guarded.port}/metrics`, { authorization: 'Bearer scrape-me' });
      expect(ok.status).to.equal(200);
      expectProblem(await get(`http://${outside}:${guarded.port}/metrics`), 401, 'unauthorized');
    } finally {
      await guarded.close();
    }
  });
});
