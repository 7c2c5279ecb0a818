import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { classify } from '../../activities/webhooks/delivery.ts';
import { envelopeBody, RUN_OBJECT_LIMIT_BYTES, type StoredEvent } from '../../shared/webhooks/payload.ts';
import { generateWebhookSecret, signedHeaders } from '../../shared/webhooks/signature.ts';

describe('webhook delivery rules', () => {
  it('classifies answers per SPEC 6.3', () => {
    for (const s of [200, 201, 204, 299]) expect(classify(s), String(s)).to.equal('success');
    for (const s of [408, 429, 500, 502, 503, 301, 302, 307, 308]) expect(classify(s), String(s)).to.equal('retry');
    for (const s of [400, 401, 403, 404, 410, 422]) expect(classify(s), String(s)).to.equal('permanent');
  });

  it('makes whsec_ secrets of letters and digits that standardwebhooks verifies', () => {
    for (let i = 0; i < 50; i++) {
      const secret = generateWebhookSecret();
      expect(secret).to.match(/^whsec_[A-Za-z0-9]{32}$/);
      const body = JSON.stringify({ hello: i });
      const headers = signedHeaders([secret], 'evt_abc', 1, body);
      expect(new Webhook(secret).verify(body, headers)).to.deep.equal({ hello: i });
    }
  });

  it('drops result, then input, above 256 KiB, and never sends them in summary mode', () => {
    const event = (object: Record<string, unknown>): StoredEvent => ({
      id: 'evt_1',
      type: 'run.success',
      org_id: 'o',
      space_id: 's',
      package_id: '@a/b',
      data: { object },
      occurred_at: new Date('2026-01-01T00:00:00Z'),
    });
    const big = 'x'.repeat(RUN_OBJECT_LIMIT_BYTES);
    const small = { object: 'run', id: 'run_1', status: 'success', input: { a: 1 }, result: { output: { ok: true } } };
    expect(JSON.parse(envelopeBody(event(small), 'full')).data.object).to.deep.equal(small);
    const resultTooBig = JSON.parse(envelopeBody(event({ ...small, result: { output: big } }), 'full')).data.object;
    expect(resultTooBig).to.include({ resultTruncated: true }).and.not.have.property('result');
    expect(resultTooBig.input).to.deep.equal({ a: 1 });
    const bothTooBig = JSON.parse(envelopeBody(event({ ...small, input: { big }, result: { output: big } }), 'full')).data.object;
    expect(bothTooBig).to.include({ resultTruncated: true, inputTruncated: true });
    const summary = JSON.parse(envelopeBody(event(small), 'summary'));
    expect(summary.data.object).to.deep.equal({ object: 'run', id: 'run_1', status: 'success' });
    expect(summary).to.include({ id: 'evt_1', object: 'event', type: 'run.success', apiVersion: '2026-03-21', timestamp: '2026-01-01T00:00:00.000Z' });
  });
});
