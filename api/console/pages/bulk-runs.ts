// Cancel or replay every run the run list's filters match, as a bulk job (POST
// /api/runs/bulk/cancel and /replay: the same job, on the same rate-limit counters), then follow
// its progress. The list's button leads to a confirmation that says what will happen to how many
// runs; confirming creates the job. Filters a job's own filter cannot say (schedule, end-user)
// become the ids of the runs they match, up to the job's limit of ids.
import { BULK_MAX_IDS, BULK_MAX_RUNS, type BulkFilter, type BulkKind } from '../../../shared/runs/bulk.ts';
import { createBulkJob } from '../../../shared/runs/bulk-jobs.ts';
import { RUN_STATUSES, type RunStatus } from '../../../shared/runs/model.ts';
import type { Scope } from '../../../shared/permissions.ts';
import { launcherOf } from '../../resources/launch.ts';
import { runAudience, visibleRuns } from '../../resources/runs.ts';
import { setFlash } from '../flash.ts';
import { csrfField } from '../forms.ts';
import { html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage, type PageContext, type PageDef, redirect } from '../page.ts';
import { applyRunFilters, cancellableStatuses, createdAfterOf, describeFilters, filterQuery, parseRunFilters, type RunFilters } from '../views/run-filters.ts';

interface Kind {
  kind: BulkKind;
  scope: Scope;
  apiRoute: string;
  /** The statuses the job covers. */
  statuses(f: RunFilters): RunStatus[];
  verb: string;
  explain: string;
}

const KINDS: Record<BulkKind, Kind> = {
  cancel: {
    kind: 'cancel',
    scope: 'runs:cancel',
    apiRoute: 'POST /api/runs/bulk/cancel',
    statuses: cancellableStatuses,
    verb: 'Cancel',
    explain: 'Each run still pending or running is cancelled; a run that ends meanwhile is left as it ended.',
  },
  replay: {
    kind: 'replay',
    scope: 'agents:run',
    apiRoute: 'POST /api/runs/bulk/replay',
    statuses: (f) => (f.status ? [f.status] : [...RUN_STATUSES]),
    verb: 'Replay',
    explain: "Each run is launched again as a new run, same agent version and input, by you, within the organization's run limits.",
  },
};

/** What the filters select for this kind of job: the job's filter, and how many runs it covers (undefined: too many ids). */
async function selection(page: PageContext, k: Kind, filters: RunFilters, now: number): Promise<{ filter: BulkFilter; count: number } | undefined> {
  const statuses = k.statuses(filters);
  const runs = () => applyRunFilters(visibleRuns(page.ctx), filters, now).whereIn('r.status', statuses);
  const filter: BulkFilter = { status: statuses };
  if (filters.schedule || filters.endUser) {
    const ids = (await runs()
      .limit(BULK_MAX_IDS + 1)
      .pluck('r.id')) as string[];
    if (ids.length > BULK_MAX_IDS) return undefined;
    filter.ids = ids;
  }
  if (filters.agent) filter.packageId = filters.agent;
  const after = createdAfterOf(filters, now);
  if (after) filter.createdAfter = after.toISOString();
  if (filters.createdBefore) filter.createdBefore = filters.createdBefore.toISOString();
  const count = filter.ids ? filter.ids.length : Number((await runs().count<{ n: string }[]>('* as n'))[0].n);
  return { filter, count: Math.min(count, BULK_MAX_RUNS) };
}

function bulkPage(k: Kind): PageDef {
  return definePage({
    method: 'post',
    path: `/orgs/:orgId/spaces/:spaceId/runs/bulk-${k.kind}`,
    context: 'space',
    scope: k.scope,
    rateLimit: { key: k.apiRoute, rule: { points: 20, duration: 60, by: 'identity' } },
    async handler(page) {
      const { ctx } = page;
      const base = page.space!.base;
      const { filters, errors } = parseRunFilters((n) => page.form.get(n));
      const back = `${base}/runs?${filterQuery(filters)}`;
      const now = Number(page.form.get('at')) || Date.now();
      const chosen = Object.keys(errors).length ? undefined : await selection(page, k, filters, now);
      if (!chosen) {
        setFlash(ctx, {
          kind: 'error',
          text: `Nothing was done: ${
            Object.keys(errors).length
              ? 'a filter is not valid'
              : `more than ${BULK_MAX_IDS} \
runs match a schedule or end-user filter; narrow the filters (agent, time)`
          }.`,
        });
        return redirect(page, back);
      }
      if (!chosen.count) {
        setFlash(ctx, { kind: 'ok', text: `No run matches these filters any more: nothing to ${k.verb.toLowerCase()}.` });
        return redirect(page, back);
      }
      if (page.form.get('confirm') !== 'yes') {
        const hidden = [...filterQuery(filters)].map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
        const what = `${k.verb} ${chosen.count} run${chosen.count === 1 ? '' : 's'}`;
        return sendConsolePage(page, {
          title: `${what}?`,
          current: 'runs',
          crumbs: [{ label: 'Runs', href: back }, { label: `${k.verb} runs` }],
          body: html`<p class="lead">${k.explain}</p>
<p>Runs covered: <strong>${chosen.count}</strong>${
            chosen.count >= BULK_MAX_RUNS
              ? ` (at most ${BULK_MAX_RUNS} in one \
job, the oldest first)`
              : ''
          }, matching ${describeFilters(filters)}.</p>
<form method="post" action="${base}/runs/bulk-${k.kind}" class="inline-form">${csrfField(page)}${hidden}<input \
type="hidden" name="at" value="${now}"><input type="hidden" name="confirm" value="yes"><button type="submit" \
class="${k.kind === 'cancel' ? 'danger' : ''}">${what}</button></form> <a class="button secondary" href="${back}">Back \
to the runs</a>`,
        });
      }
      const job = await createBulkJob(ctx.services.knex, ctx.services.workflows, { audience: runAudience(ctx), ...launcherOf(ctx) }, k.kind, chosen.filter);
      redirect(page, `${base}/runs/bulk/${job.id}?${new URLSearchParams({ back })}`);
    },
  });
}

export const bulkCancel = bulkPage(KINDS.cancel);
export const bulkReplay = bulkPage(KINDS.replay);
