// DESIGN.md 7: the `success_criteria[].condition` grammar (shared/integrations/criteria.ts), its
// refusal at import (shared/packages/manifest-schema.ts), and `authorized_uris` patterns
// (shared/integrations/uris.ts).
import { expect } from 'chai';
import { type LoginAnswer, failedCriterion, parseCondition } from '../../shared/integrations/criteria.ts';
import { matchesAuthorizedUri } from '../../shared/integrations/uris.ts';
import { ProblemError } from '../../shared/errors.ts';
import { validateManifest } from '../../shared/packages/manifest-schema.ts';
import { integrationManifest } from '../fixtures/packages/build.ts';

function answer(partial: Partial<LoginAnswer> = {}): LoginAnswer {
  return { status: 200, headers: {}, cookies: {}, body: '', ...partial };
}

/** undefined when every condition holds, else the first failing one. */
function check(conditions: string[] | undefined, a: LoginAnswer): string | undefined {
  return failedCriterion(
    conditions?.map((condition) => ({ condition })),
    a,
  );
}

describe('integration login success criteria', () => {
  describe('parseCondition', () => {
    it('parses each form of the grammar', () => {
      expect(parseCondition('$statusCode == 200')).to.deep.equal({ kind: 'status', op: '==', value: 200 });
      for (const op of ['==', '!=', '<', '<=', '>', '>=']) {
        expect(parseCondition(`$statusCode ${op} 204`)).to.deep.equal({ kind: 'status', op, value: 204 });
        expect(parseCondition(`$statusCode${op}204`)).to.deep.equal({ kind: 'status', op, value: 204 });
      }
      expect(parseCondition('$statusCode in [200, 204]')).to.deep.equal({ kind: 'status_in', values: [200, 204] });
      expect(parseCondition('$statusCode in [302]')).to.deep.equal({ kind: 'status_in', values: [302] });
      expect(parseCondition('$header.X-Token exists')).to.deep.equal({ kind: 'header', name: 'x-token' });
      expect(parseCondition('$cookie.sid exists')).to.deep.equal({ kind: 'cookie', name: 'sid' });
      expect(parseCondition('$body contains "ok"')).to.deep.equal({ kind: 'body', text: 'ok' });
      expect(parseCondition('$body contains "say \\"hi\\""')).to.deep.equal({ kind: 'body', text: 'say "hi"' });
      expect(parseCondition('  $statusCode == 200  ')).to.deep.equal({ kind: 'status', op: '==', value: 200 });
    });

    it('rejects anything outside the grammar (never evaluated as code)', () => {
      for (const bad of [
        '',
        'true',
        '$statusCode = 200',
        '$statusCode === 200',
        '$statusCode == 2000',
        '$statusCode == abc',
        '$statusCode in []',
        '$statusCode in 200, 204',
        '$header.x-token',
        '$header. exists',
        '$cookie.sid present',
        '$body contains ok',
        '$body matches "ok"',
        '$status == 200',
        'process.exit(1)',
        '$statusCode == 200 && $cookie.sid exists',
      ]) {
        expect(parseCondition(bad), bad).to.equal(undefined);
      }
    });
  });

  describe('failedCriterion', () => {
    it('with no criteria, only a 2xx status counts', () => {
      for (const criteria of [undefined, []]) {
        expect(check(criteria, answer({ status: 200 }))).to.equal(undefined);
        expect(check(criteria, answer({ status: 204 }))).to.equal(undefined);
        expect(check(criteria, answer({ status: 299 }))).to.equal(undefined);
        expect(check(criteria, answer({ status: 302 }))).to.equal('2xx status');
        expect(check(criteria, answer({ status: 401 }))).to.equal('2xx status');
        expect(check(criteria, answer({ status: 199 }))).to.equal('2xx status');
      }
    });

    it('evaluates status comparisons', () => {
      const cases: Array<[string, number, boolean]> = [
        ['$statusCode == 200', 200, true],
        ['$statusCode == 200', 201, false],
        ['$statusCode != 401', 200, true],
        ['$statusCode != 401', 401, false],
        ['$statusCode < 300', 299, true],
        ['$statusCode < 300', 300, false],
        ['$statusCode <= 302', 302, true],
        ['$statusCode <= 302', 303, false],
        ['$statusCode > 199', 200, true],
        ['$statusCode > 199', 199, false],
        ['$statusCode >= 302', 302, true],
        ['$statusCode >= 302', 301, false],
        ['$statusCode in [200, 204]', 204, true],
        ['$statusCode in [200, 204]', 201, false],
      ];
      for (const [condition, status, holds] of cases) {
        expect(check([condition], answer({ status })), `${condition} @ ${status}`).to.equal(holds ? undefined : condition);
      }
    });

    it('a criterion replaces the 2xx default: a redirect can be a success', () => {
      expect(check(['$statusCode == 302', '$cookie.sid exists'], answer({ status: 302, cookies: { sid: 'abc' } }))).to.equal(undefined);
    });

    it('checks headers (case-insensitively), cookies and the body', () => {
      expect(check(['$header.x-token exists'], answer({ headers: { 'x-token': 't' } }))).to.equal(undefined);
      expect(check(['$header.X-Token exists'], answer({ headers: { 'x-token': ['a', 'b'] } }))).to.equal(undefined);
      expect(check(['$header.x-token exists'], answer({ headers: { 'x-other': 't' } }))).to.equal('$header.x-token exists');
      expect(check(['$cookie.sid exists'], answer({ cookies: { sid: '' } }))).to.equal(undefined);
      expect(check(['$cookie.sid exists'], answer({ cookies: { SID: 'x' } }))).to.equal('$cookie.sid exists');
      expect(check(['$body contains "ok"'], answer({ body: '{"status":"ok"}' }))).to.equal(undefined);
      expect(check(['$body contains "ok"'], answer({ body: 'denied' }))).to.equal('$body contains "ok"');
    });

    it('needs every condition to hold and names the first that does not', () => {
      const criteria = ['$statusCode == 200', '$cookie.sid exists', '$body contains "welcome"'];
      expect(check(criteria, answer({ cookies: { sid: 'x' }, body: 'welcome back' }))).to.equal(undefined);
      expect(check(criteria, answer({ cookies: {}, body: 'nope' }))).to.equal('$cookie.sid exists');
      expect(check(criteria, answer({ status: 500, cookies: { sid: 'x' }, body: 'welcome' }))).to.equal('$statusCode == 200');
    });

    it('an unknown form never counts as success', () => {
      expect(check(['$statusCode = 200'], answer({ status: 200 }))).to.equal('$statusCode = 200');
      expect(check(['$statusCode == 200', 'true'], answer({ status: 200 }))).to.equal('true');
    });
  });

  describe('import refusal', () => {
    function withCriteria(conditions: string[]) {
      const m = integrationManifest('@a/login');
      Object.assign(m.auths.main, {
        connect: {
          login: {
            request: { method: 'POST', url: 'https://api.example.com/login', body: { user: '{$credential.token}' } },
            success_criteria: conditions.map((condition) => ({ condition })),
          },
        },
      });
      return m;
    }

    it('accepts conditions in the grammar', () => {
      expect(validateManifest(withCriteria(['$statusCode in [200, 204]', '$cookie.sid exists', '$body contains "ok"'])).type).to.equal('integration');
    });

    it('refuses a condition outside the grammar with validation_failed naming it', () => {
      try {
        validateManifest(withCriteria(['$statusCode == 200', 'status is 200', '$cookie.sid exists', 'eval("1")']));
        expect.fail('expected validation_failed');
      } catch (err) {
        expect(err).to.be.instanceOf(ProblemError);
        const p = err as ProblemError;
        expect(p.code).to.equal('validation_failed');
        expect(p.errors!.map((e) => e.field)).to.deep.equal([
          'manifest.auths.main.connect.login.success_criteria.1.condition',
          'manifest.auths.main.connect.login.success_criteria.3.condition',
        ]);
        expect(p.errors![0].message).to.include('$statusCode');
      }
    });
  });
});

describe('authorized_uris patterns', () => {
  it('`**` matches anything, across segments and labels', () => {
    expect(matchesAuthorizedUri('https://api.example.com/v1/users/42?x=1', ['https://api.example.com/**'])).to.equal(true);
    expect(matchesAuthorizedUri('https://api.example.com/', ['https://api.example.com/**'])).to.equal(true);
    expect(matchesAuthorizedUri('https://a.b.example.com/x', ['https://**.example.com/**'])).to.equal(true);
    expect(matchesAuthorizedUri('https://api.example.org/x', ['https://api.example.com/**'])).to.equal(false);
  });

  it('`*` matches within one host label', () => {
    expect(matchesAuthorizedUri('https://eu.example.com/v1', ['https://*.example.com/v1'])).to.equal(true);
    expect(matchesAuthorizedUri('https://a.eu.example.com/v1', ['https://*.example.com/v1'])).to.equal(false);
    expect(matchesAuthorizedUri('https://evil.com/.example.com/v1', ['https://*.example.com/v1'])).to.equal(false);
    expect(matchesAuthorizedUri('https://evil.com:443.example.com/v1', ['https://*.example.com/v1'])).to.equal(false);
  });

  it('`*` matches within one path segment', () => {
    expect(matchesAuthorizedUri('https://api.example.com/users/42', ['https://api.example.com/users/*'])).to.equal(true);
    expect(matchesAuthorizedUri('https://api.example.com/users/42/keys', ['https://api.example.com/users/*'])).to.equal(false);
    expect(matchesAuthorizedUri('https://api.example.com/users/42/keys', ['https://api.example.com/users/*/keys'])).to.equal(true);
    // A pattern that says nothing of the query allows any; one that does constrains it.
    expect(matchesAuthorizedUri('https://api.example.com/users/42?admin=1', ['https://api.example.com/users/*'])).to.equal(true);
    expect(matchesAuthorizedUri('https://api.example.com/users/42?admin=1', ['https://api.example.com/users/*?view=*'])).to.equal(false);
    expect(matchesAuthorizedUri('https://api.example.com/users/42?view=full', ['https://api.example.com/users/*?view=*'])).to.equal(true);
  });

  it('keeps each wildcard in its part of the URL: no host reached through the path, no userinfo, whole host labels only', () => {
    expect(matchesAuthorizedUri('https://evil.com/.example.com/login', ['https://**.example.com/**'])).to.equal(false);
    expect(matchesAuthorizedUri('https://evil.com/?.example.com/login', ['https://**.example.com/**'])).to.equal(false);
    expect(matchesAuthorizedUri('https://a.b.example.com/login', ['https://**.example.com/**'])).to.equal(true);
    expect(matchesAuthorizedUri('https://x@localhost/', ['https://*/**'])).to.equal(false);
    expect(matchesAuthorizedUri('https://api.example.com.evil.com/', ['https://api.example.com**'])).to.equal(false);
    expect(matchesAuthorizedUri('https://api.example.com/any/path', ['https://api.example.com**'])).to.equal(true);
    expect(matchesAuthorizedUri('https://apix.example.com/', ['https://api*.example.com/**'])).to.equal(false);
  });

  it('scheme and host are literal; dots are not wildcards', () => {
    expect(matchesAuthorizedUri('http://api.example.com/x', ['https://api.example.com/**'])).to.equal(false);
    expect(matchesAuthorizedUri('https://apixexample.com/x', ['https://api.example.com/**'])).to.equal(false);
    expect(matchesAuthorizedUri('https://api.example.com.evil.io/x', ['https://api.example.com/**'])).to.equal(false);
    expect(matchesAuthorizedUri('https://api.example.com:8443/x', ['https://api.example.com/**'])).to.equal(false);
    expect(matchesAuthorizedUri('https://api.example.com/exact', ['https://api.example.com/exact'])).to.equal(true);
    expect(matchesAuthorizedUri('https://api.example.com/exactly', ['https://api.example.com/exact'])).to.equal(false);
  });

  it('matches when any pattern does', () => {
    const patterns = ['https://a.example.com/**', 'https://b.example.com/v1/*'];
    expect(matchesAuthorizedUri('https://b.example.com/v1/x', patterns)).to.equal(true);
    expect(matchesAuthorizedUri('https://c.example.com/v1/x', patterns)).to.equal(false);
    expect(matchesAuthorizedUri('https://a.example.com/x', [])).to.equal(false);
  });
});
