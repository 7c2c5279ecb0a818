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
    expect(fieldsOf({ ...skillManifest('@a/x'), schema_version: '0.2' })).to.include('manifest.schema_version');
    expect(fieldsOf({ ...skillManifest('@a/x'), type: 'plugin' })).to.deep.equal(['manifest.type']);
    const { display_name: _d, ...noDisplay } = skillManifest('@a/x');
    expect(fieldsOf(noDisplay)).to.deep.equal(['manifest.display_name']);
    expect(fieldsOf(skillManifest('@a/x', '1.0.0', { timeout: 0 }))).to.deep.equal(['manifest.timeout']);
    expect(fieldsOf(skillManifest('@a/x', '1.0.0', { dependencies: { skills: { '@a/y': 'not a range!' } } }))).to.deep.equal(['manifest.dependencies.skills.@a/y']);
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
