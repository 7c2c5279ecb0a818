// Kept-alive connections for credential delivery (issue 33; shared/egress.ts,
// `pooledEgressDispatcher`): one pool per egress decision, its connections reused by the calls
// of that decision only, the number of pools bounded; a call whose decision refuses a
// destination is refused before any connection, whatever another decision holds open to it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { EGRESS_POOLS_MAX, pooledEgressDispatcher } from '../../shared/egress.ts';
import type { IntegrationAuth } from '../../shared/integrations/auths.ts';
import { callWithCredential, DELIVERY_TIMEOUT_MS, DeliveryRefused } from '../../shared/integrations/deliver.ts';

describe('egress connection pools (credential delivery)', () => {
  let server: http.Server;
  let base: string;
  let opened = 0;

  before(async () => {
    server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    server.on('connection', () => opened++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const limits = { max_request_bytes: 1_000_000, max_response_bytes: 1_000_000 };
  const target = () => {
    const uris = [`${base}/**`];
    const auth: IntegrationAuth = {
      key: 'main',
      type: 'custom',
      credentialsSchema: {},
      fields: ['token'],
      connect: 'fields',
      authorizedUris: uris,
      delivery: { in: 'header', name: 'Authorization', prefix: 'Bearer ' },
    };
    return { auth, credential: { token: 'pool-token-123' }, connection: { integration_version: '1.0.0', authorized_uris: uris } };
  };
  /** The instance allows 127.0.0.1 (and the auth names it): the local target may be reached. */
  const allowing = { egressAllowInternalHosts: ['127.0.0.1'], extraCaCertsPath: undefined };
  /** The instance allows no private host: the same target is refused. */
  const refusing = { egressAllowInternalHosts: [], extraCaCertsPath: undefined };

  it('reuses kept-alive connections across the calls of one egress decision', async () => {
    const before = opened;
    for (let i = 0; i < 10; i++) {
      const answer = await callWithCredential(allowing, limits, target(), { method: 'GET', url: `${base}/item/${i}` });
      expect(answer.status).to.equal(200);
    }
    // One call after another: undici may open a second connection while the first one's answer
    // completes, and reuses them from there on (a dispatcher per call opened ten).
    expect(opened - before).to.be.within(1, 2);
  });

  it('refuses a call whose decision refuses the destination, though another decision holds a connection to it', async () => {
    await callWithCredential(allowing, limits, target(), { method: 'GET', url: `${base}/warm` });
    const before = opened;
    let refused: unknown;
    await callWithCredential(refusing, limits, target(), { method: 'GET', url: `${base}/item` }).catch((err) => {
      refused = err;
    });
    expect(refused).to.be.instanceOf(DeliveryRefused);
    expect((refused as DeliveryRefused).reason).to.equal('blocked_address');
    expect(opened).to.equal(before);
    // Separate pools: a connection is never shared across decisions.
    expect(pooledEgressDispatcher(['127.0.0.1'], DELIVERY_TIMEOUT_MS)).to.not.equal(pooledEgressDispatcher([], DELIVERY_TIMEOUT_MS));
    expect(pooledEgressDispatcher(['127.0.0.1'], DELIVERY_TIMEOUT_MS)).to.equal(pooledEgressDispatcher(['127.0.0.1', '127.0.0.1'], DELIVERY_TIMEOUT_MS));
  });

  it('keeps at most EGRESS_POOLS_MAX pools, closing the least recently used', async () => {
    const first = pooledEgressDispatcher(['first.internal']);
    for (let i = 0; i < EGRESS_POOLS_MAX; i++) pooledEgressDispatcher([`host-${i}.internal`]);
    expect(first.closed).to.equal(true);
    const again = pooledEgressDispatcher(['first.internal']);
    expect(again).to.not.equal(first);
    expect(again.closed).to.equal(false);
  });
});
