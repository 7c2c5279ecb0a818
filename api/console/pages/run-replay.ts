// Replay a run with its input, edited or not: a new run of the same agent version, launched by
// the person as POST /api/agents/{scope}/{name}/run would (input schema, connections, the
// organization's limits, the launch's rate-limit counter). A refusal shows the run page again
// with the input as typed and the reason beside it.
import { ProblemError } from '../../../shared/errors.ts';
import { launchable, launchConnections, launchFromRequest } from '../../resources/launch.ts';
import { setFlash } from '../flash.ts';
import type { FieldErrors } from '../forms.ts';
import { definePage, redirect } from '../page.ts';
import { readRun, renderRunPage } from './run.ts';

export default definePage<{ runId: string }>({
  method: 'post',
  path: '/orgs/:orgId/spaces/:spaceId/runs/:runId/replay',
  context: 'space',
  scope: 'agents:run',
  rateLimit: { key: 'POST /api/agents/:scope/:name/run', rule: { points: 20, duration: 60, by: 'identity' } },
  async handler(page) {
    const raw = page.form.get('input') ?? '';
    const refuse = (errors: FieldErrors) => renderRunPage(page, { replayInput: raw, replayErrors: errors, status: 400 });
    let input: unknown;
    try {
      input = JSON.parse(raw);
    } catch (err) {
      return refuse({ 'replay-input': `This is not JSON: ${(err as Error).message}` });
    }
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return refuse({ 'replay-input': 'The input must be a JSON object: { … }.' });
    const run = await readRun(page);
    if (run.ephemeral) return refuse({ '': 'An inline agent cannot be replayed from the console.' });
    try {
      const { agent, input: checked, files } = await launchable(page.ctx, run.scope, run.name, run.package_version, input as Record<string, unknown>);
      const connections = await launchConnections(page.ctx, agent);
      const created = await launchFromRequest(page.ctx, { agent, input: checked, files, connections });
      setFlash(page.ctx, { kind: 'ok', text: `Replayed ${run.id} as ${created.id}.` });
      redirect(page, `${page.space!.base}/runs/${encodeURIComponent(created.id)}`);
    } catch (err) {
      if (!(err instanceof ProblemError)) throw err;
      if (err.code === 'validation_failed' && err.errors?.length) {
        return refuse({ 'replay-input': err.errors.map((e) => `${e.field ? `${e.field}: ` : ''}${e.message}`).join(' · ') });
      }
      if (err.code === 'not_found') return refuse({ '': `${run.scope}/${run.name}@${run.package_version} is no longer available in this space.` });
      return refuse({ '': err.detail });
    }
  },
});
