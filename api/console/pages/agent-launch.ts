// Launch a run from the agent page's generated form, as POST /api/agents/{scope}/{name}/run does
// (its functions, its rate-limit counter): the form's text becomes the input, checked against
// the version's input schema, the person's connections and the organization's limits; then the
// run's page. A refusal shows the agent page again with the form as typed and the reasons beside
// the fields.
import { ProblemError } from '../../../shared/errors.ts';
import { resolveAgent } from '../../../shared/packages/resolve-agent.ts';
import { launchable, launchConnections, launchFromRequest } from '../../resources/launch.ts';
import { setFlash } from '../flash.ts';
import { definePage, redirect } from '../page.ts';
import { inputErrorsOf, inputSpecOf, rawValuesFrom, readInputForm } from '../views/input-form.ts';
import { type AgentParams, renderAgentPage } from './agent.ts';

export default definePage<AgentParams>({
  method: 'post',
  path: '/orgs/:orgId/spaces/:spaceId/agents/:scope/:name/run',
  context: 'space',
  scope: 'agents:run',
  rateLimit: { key: 'POST /api/agents/:scope/:name/run', rule: { points: 20, duration: 60, by: 'identity' } },
  async handler(page) {
    const { ctx } = page;
    const { org, space } = page.space!;
    const { scope, name } = page.params;
    const version = page.form.get('version') || undefined;
    const agent = await resolveAgent(ctx.services.knex, org.id, space.id, scope, name, version);
    if (!agent)
      return renderAgentPage(page, {
        version,
        errors: { '': `${scope}/${name}${version ? `@${version}` : ''} has no such published version in this space any more.` },
        status: 404,
      });
    const spec = inputSpecOf(agent.manifest, true);
    const values = rawValuesFrom(spec, page.form);
    const refuse = (errors: Record<string, string>, status = 400) => renderAgentPage(page, { version: agent.version, values, errors, status });
    const read = readInputForm(spec, values);
    if (Object.keys(read.errors).length) return refuse(read.errors);
    try {
      const launch = await launchable(ctx, scope, name, agent.version, read.input);
      const connections = await launchConnections(ctx, launch.agent);
      const run = await launchFromRequest(ctx, { agent: launch.agent, input: launch.input, files: launch.files, connections });
      setFlash(ctx, { kind: 'ok', text: `Launched ${run.id} (${launch.agent.fullName}@${launch.agent.version}).` });
      redirect(page, `${page.space!.base}/runs/${encodeURIComponent(run.id)}`);
    } catch (err) {
      if (!(err instanceof ProblemError) || (err.code === 'not_found' && !err.errors?.length)) throw err;
      if (err.code === 'validation_failed') return refuse(inputErrorsOf(spec, err));
      if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
      // connection_missing, the organization's limits, an unresolvable skill: said at the top.
      const details = (err.errors ?? []).map((e) => e.message).filter(Boolean);
      return refuse({ '': [err.detail, ...details.filter((d) => d !== err.detail)].join(' · ') }, err.status);
    }
  },
});
