// A bulk job's progress (GET /api/runs/bulk/{jobId} for the console): how many runs it covers,
// how many it handled, their outcomes and the first failures. While it runs, console.js reads
// this page again every second and swaps the progress in.
import { readBulkJob } from '../../../shared/runs/bulk-jobs.ts';
import { problem } from '../../../shared/errors.ts';
import { runAudience } from '../../resources/runs.ts';
import { formatTime } from '../format.ts';
import { html } from '../html.ts';
import { sendConsolePage } from '../layout.ts';
import { definePage } from '../page.ts';

const STATUS: Record<string, string> = { queued: 'Queued: finding the runs', running: 'Running', completed: 'Completed' };

export default definePage<{ jobId: string }>({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId/runs/bulk/:jobId',
  context: 'space',
  scope: 'runs:read',
  async handler(page) {
    const job = await readBulkJob(page.ctx.services.knex, runAudience(page.ctx), page.params.jobId);
    if (!job) throw problem('not_found', 'No such bulk job');
    const base = page.space!.base;
    const backRaw = typeof page.query.back === 'string' ? page.query.back : '';
    const back = backRaw.startsWith(`${base}/runs`) && !backRaw.includes('//') ? backRaw : `${base}/runs`;
    const what = job.kind === 'cancel' ? 'Bulk cancel' : 'Bulk replay';
    const total = job.total ?? 0;
    const done = job.status === 'completed';
    const failures = job.failures.length
      ? html`<h2>Failures</h2><ul>${job.failures.map(
          (f) => html`<li><a href="${base}/runs/${f.runId}">\
<code>${f.runId}</code></a>: ${f.detail} <span class="muted">(${f.code})</span></li>`,
        )}</ul>`
      : '';
    sendConsolePage(page, {
      title: `${what} ${job.id}`,
      current: 'runs',
      crumbs: [{ label: 'Runs', href: back }, { label: `${what} ${job.id}` }],
      heading: html`<h1>${what}</h1>`,
      body: html`<div id="bulk-progress" data-live-region${done ? '' : html` data-controller="refresh" data-every="1000" data-regions="bulk-progress"`}>
<p class="lead" id="bulk-status">${STATUS[job.status] ?? job.status}${
        job.total !== null
          ? html`: ${job.processed} \
of ${total} run${total === 1 ? '' : 's'} handled`
          : ''
      }.</p>
<progress id="bulk-bar" max="${Math.max(total, 1)}" value="${job.total === null ? 0 : job.processed}" \
aria-labelledby="bulk-status">${job.processed} of ${total}</progress>
<dl class="facts">
<div><dt>${job.kind === 'cancel' ? 'Cancellation requested' : 'Launched'}</dt><dd data-field="succeeded">${job.succeeded}</dd></div>
<div><dt>${job.kind === 'cancel' ? 'Already ended' : 'Skipped'}</dt><dd data-field="skipped">${job.skipped}</dd></div>
<div><dt>Failed</dt><dd data-field="failed">${job.failed}</dd></div>
<div><dt>Started</dt><dd>${formatTime(job.createdAt)}</dd></div>
${job.finishedAt ? html`<div><dt>Finished</dt><dd>${formatTime(job.finishedAt)}</dd></div>` : ''}
</dl>
${job.truncated ? html`<p class="note">More runs matched than one job covers; the oldest ${total} are handled. Run it again for the rest.</p>` : ''}
${failures}
</div>
<p><a href="${back}">Back to the runs</a></p>`,
    });
  },
});
