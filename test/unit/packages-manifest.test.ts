// Manifest validation (SPEC 2.12) and version selection.
import { expect } from 'chai';
import { ProblemError } from '../../shared/errors.ts';
import { validateManifest } from '../../shared/packages/manifest-schema.ts';
import { effectiveTimeoutSeconds } from '../../shared/packages/timeout.ts';
import { latestOf, pickVersion } from '../../shared/packages/versions.ts';
import { agentManifest, integrationManifest, mcpManifest, skillManifest } from '../fixtures/packages/build.ts';

function fieldsOf(manifest: unknown): string[] {
  try {
    validateManifest(manifest);
  } catch (err) {
    expect(err).to.be.instanceOf(ProblemError);
    expect((err as ProblemError).code).to.equal('validation_failed');
    return (err as ProblemError).errors!.map((e) => e.field);
  }
  throw new Error('expected validation_failed');
}

describe('package manifests', () => {
  it('accepts a manifest of each type', () => {
    for (const m of [agentManifest('@a/agent'), skillManifest('@a/skill'), integrationManifest('@a/int'), mcpManifest('@a/mcp')]) {
      expect(validateManifest(m).type).to.equal(m.type);
    }
  });

  it('names the offending field', () => {
    expect(fieldsOf(agentManifest('@a/x', 'one'))).to.include('manifest.version');
    expect(fieldsOf(agentManifest('acme/x'))).to.include('manifest.name');
    expect(fieldsOf({ ...skillManifest('@a/x'), schema_version: '0.2.x' })).to.deep.equal(['manifest.schema_version']);
    expect(fieldsOf({ ...skillManifest('@a/x'), type: 'plugin' })).to.deep.equal(['manifest.type']);
    const { display_name: _d, ...noDisplay } = skillManifest('@a/x');
    expect(fieldsOf(noDisplay)).to.deep.equal(['manifest.display_name']);
    expect(fieldsOf(skillManifest('@a/x', '1.0.0', { timeout: 0 }))).to.deep.equal(['manifest.timeout']);
    expect(fieldsOf(skillManifest('@a/x', '1.0.0', { dependencies: { skills: { '@a/y': 'not a range!' } } }))).to.deep.equal([
      'manifest.dependencies.skills.@a/y',
    ]);
  });

  it('wants object-type input and output schemas that compile', () => {
    expect(fieldsOf(agentManifest('@a/x', '1.0.0', { input: { schema: { type: 'array' } } }))).to.include('manifest.input.schema.type');
    expect(fieldsOf(agentManifest('@a/x', '1.0.0', { output: { schema: { type: 'object', properties: { a: { type: 'nope' } } } } }))).to.deep.equal([
      'manifest.output.schema',
    ]);
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { a: { type: 'string' } } };
    expect(validateManifest(agentManifest('@a/x', '1.0.0', { input: { schema: draft7 } })).type).to.equal('agent');
  });

  it('refuses cookie delivery and templated authorized_uris on auths with connect', () => {
    const m = integrationManifest('@a/int');
    m.auths.main.delivery.http.in = 'cookie';
    expect(fieldsOf(m)).to.deep.equal(['manifest.auths.main.delivery.http.in']);
    const c = integrationManifest('@a/int');
    Object.assign(c.auths.main, {
      connect: { login: { request: { method: 'POST', url: 'https://api.example.com/login' }, outputs: { session: { from: 'cookie', name: 'sid' } } } },
      authorized_uris: ['https://api.example.com/**', 'https://{$credential.host}/**'],
    });
    expect(fieldsOf(c)).to.deep.equal(['manifest.auths.main.authorized_uris.1']);
    // Without connect, a templated URI is allowed.
    const t = integrationManifest('@a/int');
    t.auths.main.authorized_uris = ['https://{$credential.host}/**'];
    expect(validateManifest(t).type).to.equal('integration');
  });

  it('reads every schema_version of major 0 and refuses another major alone, naming 0.x', () => {
    for (const v of ['0.1', '0.2', '0.3', '0.12', '0.1.0']) expect(validateManifest({ ...skillManifest('@a/x'), schema_version: v }).type).to.equal('skill');
    try {
      // Under another major the other fields may mean something else: only the version is named.
      validateManifest({ ...agentManifest('@a/x'), schema_version: '1.0', input: 'not an object' });
      throw new Error('expected a refusal');
    } catch (err) {
      const e = err as ProblemError;
      expect(e.errors).to.have.length(1);
      expect(e.errors![0]).to.include({ field: 'manifest.schema_version', code: 'invalid_value', supported: '0.x' });
      expect(e.detail).to.equal('manifest.schema_version 1.0 is not supported: this service reads schema_version 0.x (0.1 to 0.3 and any later 0.x)');
    }
    expect(fieldsOf({ ...skillManifest('@a/x'), schema_version: 3 })).to.deep.equal(['manifest.schema_version']);
  });

  it("validates an OAuth 2 auth in the package format's shape", () => {
    const oauth = (extra: Record<string, unknown> = {}) =>
      integrationManifest('@a/int', '1.0.0', {
        schema_version: '0.1',
        _meta: { 'dev.appstrate/api': { auths: { main: {} } } },
        auths: {
          main: {
            type: 'oauth2',
            authorization_endpoint: 'https://example.com/oauth/authorize',
            token_endpoint: 'https://api.example.com/oauth/token',
            default_scopes: ['read'],
            token_endpoint_auth_method: 'client_secret_post',
            code_challenge_methods_supported: ['S256'],
            authorized_uris: ['https://api.example.com/**'],
            delivery: { http: { in: 'header', name: 'Authorization', prefix: 'Bearer', value: '{$credential.access_token}' } },
            _meta: { 'dev.appstrate/oauth': { scope_separator: ',' }, 'dev.appstrate/auth': { required: true } },
            ...extra,
          },
        },
      });
    expect(validateManifest(oauth()).type).to.equal('integration');
    expect(fieldsOf(oauth({ token_endpoint_auth_method: 'private_key_jwt' }))).to.deep.equal(['manifest.auths.main.token_endpoint_auth_method']);
    expect(fieldsOf(oauth({ token_endpoint: undefined }))).to.deep.equal(['manifest.auths.main.token_endpoint']);
    expect(fieldsOf(oauth({ token_endpoint: 'ftp://example.com/token' }))).to.deep.equal(['manifest.auths.main.token_endpoint']);
    expect(fieldsOf(oauth({ default_scopes: 'read' }))).to.deep.equal(['manifest.auths.main.default_scopes']);
    expect(fieldsOf(oauth({ _meta: { 'dev.appstrate/oauth': { scope_separator: '' } } }))).to.deep.equal([
      'manifest.auths.main._meta.dev.appstrate/oauth.scope_separator',
    ]);
    expect(fieldsOf(oauth({ authorization_params: { access_type: 'offline', redirect_uri: 'https://evil.example/cb' } }))).to.deep.equal([
      'manifest.auths.main.authorization_params.redirect_uri',
    ]);
    expect(fieldsOf(oauth({ oauth2: { authorization_url: 'https://example.com/a', token_url: 'https://example.com/t' } }))).to.deep.equal([
      'manifest.auths.main.oauth2',
    ]);
    // Only an issuer (discovery): imports, and cannot connect until endpoints are given.
    expect(validateManifest(oauth({ authorization_endpoint: undefined, token_endpoint: undefined, issuer: 'https://accounts.example.com' })).type).to.equal(
      'integration',
    );
  });

  it('picks exact versions, latest and ranges', () => {
    const versions = ['1.0.0', '1.2.0', '2.0.0-beta.1', '1.10.0'];
    expect(latestOf(versions)).to.equal('1.10.0');
    expect(latestOf(['2.0.0-beta.1', '2.0.0-beta.2'])).to.equal('2.0.0-beta.2');
    expect(pickVersion(versions)).to.equal('1.10.0');
    expect(pickVersion(versions, 'latest')).to.equal('1.10.0');
    expect(pickVersion(versions, '1.2.0')).to.equal('1.2.0');
    expect(pickVersion(versions, '1.3.0')).to.equal(undefined);
    expect(pickVersion(versions, '~1.2')).to.equal('1.2.0');
    expect(pickVersion(versions, '^1')).to.equal('1.10.0');
    expect(pickVersion(versions, '>=2.0.0-beta.0')).to.equal('2.0.0-beta.1');
    expect(pickVersion(versions, 'garbage')).to.equal(undefined);
  });

  it('clamps timeouts to the ceiling', () => {
    expect(effectiveTimeoutSeconds(undefined, 1800)).to.equal(300);
    expect(effectiveTimeoutSeconds(120, 1800)).to.equal(120);
    expect(effectiveTimeoutSeconds(7200, 1800)).to.equal(1800);
    expect(effectiveTimeoutSeconds(null, 60)).to.equal(60);
  });
});
