import { expect } from 'chai';

/** Asserts an RFC 9457 problem document with the SPEC 7 fields, status and code. */
export function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
  expect(res.body).to.include({ status, code });
  expect(res.body.type).to.match(new RegExp(`/errors/${code.replace(/_/g, '-')}$`));
  expect(res.body.title).to.be.a('string').and.not.empty;
  expect(res.body.detail).to.be.a('string').and.not.empty;
  expect(res.body.request_id).to.match(/^req_/);
  expect(res.body.request_id).to.equal(res.headers.get('request-id'));
  expect(res.body.instance).to.equal(`urn:request:${res.body.request_id}`);
}
