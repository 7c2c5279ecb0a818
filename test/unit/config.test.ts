import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../shared/config.ts';

describe('configuration', () => {
  it('applies the SPEC 8.3-8.5 defaults when the JSON settings are unset or {}', () => {
    const c = loadConfig({ PLATFORM_RUN_LIMITS: '{}' });
    expect(c.platformRunLimits).to.deep.equal({
      timeout_ceiling_seconds: 1800,
      per_org_global_rate_per_min: 200,
      max_concurrent_per_org: 50,
      agent_memory_ceiling_mb: 1536,
      agent_cpu_ceiling: 2,
      agent_disk_ceiling_mb: 512,
      agent_pids_ceiling: 256,
    });
    expect(c.inlineRunLimits.retention_days).to.equal(30);
    expect(c.inlineRunLimits.wildcard_uri_allowed).to.equal(false);
    expect(c.llmProxyLimits).to.deep.equal({ rate_per_min: 60, max_request_bytes: 10 * 1024 * 1024 });
    expect(c.credentialProxyLimits.max_response_bytes).to.equal(50 * 1024 * 1024);
    expect(c.apiBodyLimitBytes).to.equal(10 * 1024 * 1024);
    // DESIGN.md section 8: a run resumes from its checkpoint until it has lost three workers.
    expect(c.runMaxWorkerLosses).to.equal(3);
    expect(c.runCheckpoints).to.equal(true);
  });

  it('merges a partial setting over the defaults', () => {
    const c = loadConfig({ PLATFORM_RUN_LIMITS: '{"max_concurrent_per_org": 3}' });
    expect(c.platformRunLimits.max_concurrent_per_org).to.equal(3);
    expect(c.platformRunLimits.timeout_ceiling_seconds).to.equal(1800);
  });

  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ PLATFORM_RUN_LIMITS: '{"max_concurent_per_org": 3}' }, /PLATFORM_RUN_LIMITS has an unknown key "max_concurent_per_org"/],
    [{ INLINE_RUN_LIMITS: '{"wildcard_uri_allowed": "yes"}' }, /INLINE_RUN_LIMITS\.wildcard_uri_allowed must be boolean/],
    [{ LLM_PROXY_LIMITS: '{"rate_per_min": 1.5}' }, /LLM_PROXY_LIMITS\.rate_per_min must be integer/],
    [{ CREDENTIAL_PROXY_LIMITS: '[1' }, /CREDENTIAL_PROXY_LIMITS is not valid JSON/],
    [{ PORT: 'abc' }, /PORT must be an integer/],
    [{ RUN_MAX_WORKER_LOSSES: '0' }, /RUN_MAX_WORKER_LOSSES must be an integer >= 1/],
    [{ RUN_CHECKPOINTS: 'off' }, /RUN_CHECKPOINTS must be one of true, false/],
    [{ AUTH_SIGNUP: 'maybe' }, /AUTH_SIGNUP must be one of open, closed/],
    [{ TRUSTED_ORIGINS: 'https://a.example.com/path' }, /TRUSTED_ORIGINS entry/],
  ];
  for (const [env, message] of bad) {
    it(`stops the boot on ${Object.entries(env)[0].join('=')}`, () => {
      expect(() => loadConfig(env)).to.throw(ConfigError, message);
    });
  }
});
