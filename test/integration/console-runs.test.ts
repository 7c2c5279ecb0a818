// The console's run pages (DESIGN.md 10, issue 32) in Debian's Chromium through playwright-core,
// on the real stack: sign in through the form, the runs list following new runs and their status
// without reload, a run page whose log lines and status arrive live, its timeline, filters kept
// in the URL, cancel, bulk cancel with progress, replay with an edited input, tenancy (another
// organization's run is the 404 page), no CSP violation anywhere, a keyboard-only pass through
// the list and the landmarks and labels of ariaSnapshot(). Screenshots go to docs/console/.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { newMember, newOrg, PASSWORD } from '../support/api.ts';
import { consoleSession, screenshot, signInThroughForm, useConsole } from '../support/console-browser.ts';
import { toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { addFakeModel, type ModelServices, startModelServices } from '../support/run-services.ts';

// Code passed to page.evaluate runs in the page; the project compiles without the DOM library.
declare const document: any;
type HTMLElement = any;

const INPUT = { type: 'object', required: ['topic'], properties: { topic: { type: 'string', minLength: 1 } } };
const OUTPUT = { type: 'object', required: ['summary'], properties: { summary: { type: 'string' } } };

/** A model step that waits until the test lets it go. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, wait: () => opened };
}

describe('console: runs (browser)', function () {
  this.timeout(180_000);
  const ui = useConsole();
  let services: ModelServices;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let other: Awaited<ReturnType<typeof newOrg>>;
  let otherRunId: string;
  let page: Page;
  let base: string;

  async function configure(o: typeof org) {
    await addFakeModel(o.client, services.model, { inputCostPerMTok: 1, outputCostPerMTok: 2 });
    await importAgent(o.client, { name: '@acme/writer', input: INPUT, output: OUTPUT, prompt: 'Write about {{input.topic}}.' });
  }

  async function launch(topic: string, client = org.client) {
    const res = await client.post('/api/agents/@acme/writer/run', { input: { topic } });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  }

  const waitRun = async (id: string, client = org.client) => (await client.get(`/api/runs/${id}?wait=30`)).body;

  before(async () => {
    services = await startModelServices({
      output: { summary: 'done' },
      apiEnv: { TEMPORAL_UI_URL: 'http://temporal-ui.test:8233' },
      workerEnv: { PLATFORM_RUN_LIMITS: JSON.stringify({ agent_memory_ceiling_mb: 256 }) },
    });
    org = await newOrg(services.api, 'console');
    other = await newOrg(services.api, 'console-other');
    await configure(org);
    await configure(other);
    otherRunId = await launch('other org', other.client);
    await waitRun(otherRunId, other.client);
    base = `${services.api.url}/console/orgs/${org.orgId}/spaces/${org.defaultSpaceId}`;
    page = ui.page;
  });
  after(async () => {
    await services?.stop();
  });

  it('serves pages under a strict CSP, with CSRF on forms, outside the API document', async () => {
    const signIn = await fetch(`${services.api.url}/console/sign-in`);
    expect(signIn.status).to.equal(200);
    expect(signIn.headers.get('content-type')).to.match(/^text\/html/);
    expect(signIn.headers.get('content-security-policy'))
      .to.match(/^default-src 'self';/)
      .and.not.include('unsafe');
    const body = await signIn.text();
    expect(body).not.to.match(/<script(?![^>]*\ssrc=)[^>]*>/); // every script is a file
    expect(body).not.to.match(/\sstyle=|<style/);
    expect(body).to.match(/<input type="hidden" name="csrf" value="[A-Za-z0-9_-]{43}">/);
    const css = body.match(/href="(\/console\/assets\/[0-9a-f]{12}\/console\.css)"/)![1];
    const asset = await fetch(services.api.url + css);
    expect(asset.headers.get('content-type')).to.match(/^text\/css/);
    expect(asset.headers.get('cache-control')).to.include('immutable');
    // a form without its CSRF value is refused with a page, not a problem document
    const forged = await fetch(`${services.api.url}/console/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `email=${encodeURIComponent(org.email)}&password=${encodeURIComponent(PASSWORD)}`,
      redirect: 'manual',
    });
    expect(forged.status).to.equal(403);
    expect(forged.headers.get('content-type')).to.match(/^text\/html/);
    expect(forged.headers.get('set-cookie') ?? '').not.to.include('svc.session_token=');
    // a session's page without a session goes to sign-in and comes back after
    const runs = await fetch(`${services.api.url}/console/orgs/${org.orgId}/spaces/${org.defaultSpaceId}/runs?status=failed`, { redirect: 'manual' });
    expect(runs.status).to.equal(303);
    expect(runs.headers.get('location')).to.equal(
      `/console/sign-in?next=${encodeURIComponent(`/console/orgs/${org.orgId}/spaces/${org.defaultSpaceId}/runs?status=failed`)}`,
    );
    const doc = (await org.client.get('/api/openapi.json')).body;
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/console'))).to.deep.equal([]);
    expect(doc.paths['/api/runs/{id}/timeline'].get.operationId).to.equal('getRunTimeline');
  });

  it('signs in through the form and lands on the space picker', async () => {
    await page.goto(`${services.api.url}/console`);
    expect(new URL(page.url()).pathname).to.equal('/console/sign-in');
    await page.getByLabel('Email').fill(org.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('.field-error');
    expect(await page.textContent('.field-error')).to.include('wrong');
    expect(await page.getAttribute('#password', 'aria-invalid')).to.equal('true');
    await signInThroughForm(page, services.api.url, org.email, PASSWORD);
    expect(new URL(page.url()).pathname).to.equal('/console');
    await page.getByRole('link', { name: 'Default' }).click();
    // A space opens on its overview (console-agents.test.ts); its runs are one link away.
    await page.waitForURL(`${base}/overview`);
    await Promise.all([page.waitForURL(`${base}/runs`), page.getByRole('link', { name: 'Runs', exact: true }).click()]);
    expect(await page.textContent('h1')).to.equal('Runs');
  });

  it('shows a new run and its status changes without reload', async () => {
    await page.goto(`${base}/runs`);
    await page.evaluate(() => {
      (globalThis as any).__sameDocument = true;
    });
    const g = gate();
    services.model.script('list-live', [
      async () => {
        await g.wait();
        return toolCall('output', { summary: 'live' });
      },
    ]);
    const id = await launch('list-live');
    const row = page.locator(`#run-${id}`);
    await row.waitFor({ timeout: 20_000 });
    expect(await row.locator('.badge').textContent()).to.match(/Pending|Running/);
    await page.waitForSelector(`#run-${id} .badge.status-running`, { timeout: 20_000 });
    g.open();
    await page.waitForSelector(`#run-${id} .badge.status-success`, { timeout: 20_000 });
    expect(await page.evaluate(() => (globalThis as any).__sameDocument)).to.equal(true);
    expect(await page.textContent('#runs-live')).to.match(/new run/);
  });

  it('shows a run: its status, log lines and timeline arrive live', async () => {
    const g = gate();
    services.model.script('detail-live', [
      () => toolCall('log', { level: 'info', message: 'first line before the page' }, { prompt_tokens: 120, completion_tokens: 30 }),
      async () => {
        await g.wait();
        return toolCall('log', { level: 'warn', message: 'second line, live' }, { prompt_tokens: 150, completion_tokens: 20 });
      },
      () => toolCall('output', { summary: 'The detail page works' }, { prompt_tokens: 200, completion_tokens: 40 }),
    ]);
    const id = await launch('detail-live');
    await page.goto(`${base}/runs/${id}#logs`);
    await page.evaluate(() => {
      (globalThis as any).__sameDocument = true;
    });
    await page.waitForSelector('.log-line:has-text("first line before the page")', { timeout: 20_000 });
    expect(await page.getAttribute('#tab-logs', 'aria-selected')).to.equal('true');
    expect(await page.isVisible('#logs')).to.equal(true);
    expect(await page.isVisible('#output')).to.equal(false);
    expect(await page.textContent('#run-summary'))
      .to.include('@acme/writer')
      .and.include('1.0.0');
    const ticking = page.locator('#run-summary [data-field="duration"] [data-controller="ticker"]');
    // Running by now (its first line is there): the summary follows with a ticking duration.
    await ticking.waitFor({ timeout: 20_000 });
    const before = await ticking.textContent();
    await page.waitForFunction((b) => document.querySelector('#run-summary [data-field="duration"]')?.textContent !== b, before, { timeout: 5000 });
    g.open();
    await page.waitForSelector('.log-line.level-warn:has-text("second line, live")', { timeout: 20_000 });
    await page.waitForSelector('#run-summary .badge.status-success', { timeout: 20_000 });
    expect(await page.evaluate(() => (globalThis as any).__sameDocument)).to.equal(true);
    const seqs = await page.$$eval('#log-lines .log-line', (lis) => lis.map((li) => Number((li as HTMLElement).dataset.seq)));
    expect(seqs).to.deep.equal([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).to.equal(seqs.length);
    await page.waitForFunction(() => document.querySelector('#run-summary [data-field="tokens"]')?.textContent?.includes('560'), undefined, {
      timeout: 10_000,
    });
    // level and text filters
    await page.selectOption('#log-level', 'warn');
    expect(await page.locator('#log-lines .log-line:visible').count()).to.equal(1);
    await page.selectOption('#log-level', '');
    await page.fill('#log-text', 'first line');
    expect(await page.locator('#log-lines .log-line:visible').count()).to.equal(1);
    await page.fill('#log-text', '');
    await page.getByRole('button', { name: 'Jump to latest' }).click();
    await screenshot(page, 'run-logs');
    // output checked against the schema
    await page.getByRole('tab', { name: 'Output' }).click();
    expect(new URL(page.url()).hash).to.equal('#output');
    await page.waitForSelector('#output-body .ok-note', { timeout: 10_000 });
    expect(await page.textContent('#output-body'))
      .to.include('Matches the output schema')
      .and.include('The detail page works');
    expect(await page.getAttribute('#run-summary a[href*="temporal-ui.test"]', 'href')).to.include(`WorkflowId%3D%22${id}%22`);
    await screenshot(page, 'run-detail');
    // the timeline: one bar per step, model calls with tokens
    await page.getByRole('tab', { name: 'Timeline' }).click();
    await page.waitForFunction(() => document.querySelectorAll('#timeline-body svg g.step').length === 6, undefined, { timeout: 10_000 });
    const kinds = await page.$$eval('#timeline-body svg g.step', (gs) => gs.map((g) => g.getAttribute('class')));
    expect(kinds.filter((k) => k?.includes('kind-model'))).to.have.length(3);
    expect(await page.textContent('#timeline-body table')).to.include('120 in / 30 out');
    await screenshot(page, 'timeline');
    // a deep link opens its tab
    await page.goto(`${base}/runs/${id}#timeline`);
    expect(await page.isVisible('#timeline-body svg')).to.equal(true);
    expect(await page.isVisible('#logs')).to.equal(false);
  });

  it('marks the failed step of a failed run on its timeline', async () => {
    services.model.script('detail-fail', [
      () => toolCall('log', { level: 'info', message: 'about to fail' }),
      () => ({ status: 500, body: { error: 'model down' } }),
    ]);
    const id = await launch('detail-fail');
    expect((await waitRun(id)).status).to.equal('failed');
    await page.goto(`${base}/runs/${id}#timeline`);
    const failed = page.locator('#timeline-body svg g.step-error');
    expect(await failed.count()).to.equal(1);
    expect(await failed.locator('title').textContent()).to.match(/failed/);
    expect(await page.textContent('#run-summary .run-error')).to.include('500');
  });

  it('filters by failed, and a reload (or the link) shows the same rows', async () => {
    await page.goto(`${base}/runs`);
    await page.getByLabel('Status').selectOption('failed');
    await Promise.all([page.waitForURL(/status=failed/), page.getByRole('button', { name: 'Apply filters' }).click()]);
    const ids = await page.$$eval('#runs-rows tr', (trs) => trs.map((tr) => tr.id));
    expect(ids.length).to.be.greaterThan(0);
    const statuses = await page.$$eval('#runs-rows tr', (trs) => trs.map((tr) => (tr as HTMLElement).dataset.status));
    expect(new Set(statuses)).to.deep.equal(new Set(['failed']));
    const url = page.url();
    await page.reload();
    expect(await page.$$eval('#runs-rows tr', (trs) => trs.map((tr) => tr.id))).to.deep.equal(ids);
    const other = await ui.session.context.newPage();
    await other.goto(url);
    expect(await other.$$eval('#runs-rows tr', (trs) => trs.map((tr) => tr.id))).to.deep.equal(ids);
    expect(await other.inputValue('#filter-status')).to.equal('failed');
    await other.close();
    // a bad filter value is said beside its field
    await page.goto(`${base}/runs?status=failed&endUser=nope`);
    expect(await page.textContent('#filter-endUser-error')).to.include('eu_');
  });

  it('bulk-replays the runs a filter matches, after a confirmation', async () => {
    const failed = (await org.client.get('/api/runs?status=failed&limit=100')).body.data.length;
    expect(failed).to.be.greaterThan(0);
    await page.goto(`${base}/runs?status=failed`);
    await Promise.all([page.waitForURL(/\/runs\/bulk-replay$/), page.getByRole('button', { name: `Replay ${failed} run${failed === 1 ? '' : 's'}…` }).click()]);
    expect(await page.textContent('main')).to.include('status failed');
    const before = (await org.client.get('/api/runs?limit=1')).body.total;
    await Promise.all([page.waitForURL(/\/runs\/bulk\/bulk_/), page.getByRole('button', { name: `Replay ${failed} run${failed === 1 ? '' : 's'}` }).click()]);
    await page.waitForSelector('#bulk-status:has-text("Completed")', { timeout: 30_000 });
    expect(await page.textContent('[data-field="succeeded"]')).to.equal(String(failed));
    expect((await org.client.get('/api/runs?limit=1')).body.total).to.equal(before + failed);
    await page.getByRole('link', { name: 'Back to the runs' }).click();
    expect(new URL(page.url()).search).to.equal('?status=failed');
  });

  it('cancels a run from the list, and bulk-cancels by filter with progress', async () => {
    const g = gate();
    services.model.script('to-cancel', [
      async () => {
        await g.wait();
        return toolCall('output', { summary: 'too late' });
      },
    ]);
    const one = await launch('to-cancel one');
    await page.goto(`${base}/runs`);
    await page.locator(`#run-${one}`).waitFor();
    await Promise.all([page.waitForURL(`${base}/runs`), page.locator(`#run-${one}`).getByRole('button', { name: 'Cancel' }).click()]);
    expect(await page.textContent('.flash')).to.include('Cancellation of');
    expect((await waitRun(one)).status).to.equal('cancelled');
    await page.waitForSelector(`#run-${one} .badge.status-cancelled`, { timeout: 20_000 });

    const bulk = [await launch('to-cancel b1'), await launch('to-cancel b2'), await launch('to-cancel b3')];
    await page.goto(`${base}/runs?agent=${encodeURIComponent('@acme/writer')}`);
    const button = page.getByRole('button', { name: /Cancel \d+ live runs?/ });
    await button.waitFor();
    await Promise.all([page.waitForURL(/\/runs\/bulk-cancel$/), button.click()]);
    expect(await page.textContent('h1')).to.match(/^Cancel \d+ runs?\?$/);
    expect(await page.textContent('main')).to.include('agent @acme/writer');
    await Promise.all([page.waitForURL(/\/runs\/bulk\/bulk_/), page.getByRole('button', { name: /^Cancel \d+ runs?$/ }).click()]);
    await page.waitForSelector('#bulk-status:has-text("Completed")', { timeout: 30_000 });
    const [value, max] = await Promise.all([page.getAttribute('#bulk-bar', 'value'), page.getAttribute('#bulk-bar', 'max')]);
    expect(value).to.equal(max);
    expect(Number(max)).to.be.at.least(3);
    for (const id of bulk) expect((await waitRun(id)).status).to.equal('cancelled');
    g.open();
  });

  it('replays a run with an edited input', async () => {
    const id = await launch('replay me');
    await waitRun(id);
    await page.goto(`${base}/runs/${id}#input`);
    await page.fill('#replay-input', '{ "topic": ');
    await page.getByRole('button', { name: 'Replay with this input' }).click();
    await page.waitForSelector('#replay-input-error');
    expect(await page.textContent('#replay-input-error')).to.include('not JSON');
    expect(await page.isVisible('#replay-input')).to.equal(true);
    await page.fill('#replay-input', '{ "topic": "" }');
    await page.getByRole('button', { name: 'Replay with this input' }).click();
    await page.waitForSelector('#replay-input-error');
    expect(await page.textContent('#replay-input-error')).to.include('topic');
    await page.fill('#replay-input', '{ "topic": "replayed, edited" }');
    await Promise.all([
      page.waitForURL((u) => !u.pathname.endsWith(`/runs/${id}`) && !u.pathname.endsWith('/replay')),
      page.getByRole('button', { name: 'Replay with this input' }).click(),
    ]);
    const replayed = new URL(page.url()).pathname.split('/').pop()!;
    expect(replayed).to.match(/^run_/).and.not.equal(id);
    expect(await page.textContent('.flash')).to.include(`as ${replayed}`);
    expect((await waitRun(replayed)).input).to.deep.equal({ topic: 'replayed, edited' });
  });

  it("answers another organization's run, a malformed id and an unknown space with the 404 page", async () => {
    for (const url of [
      `${base}/runs/${otherRunId}`,
      `${services.api.url}/console/orgs/${other.orgId}/spaces/${other.defaultSpaceId}/runs/${otherRunId}`,
      `${services.api.url}/console/orgs/${other.orgId}/spaces/${other.defaultSpaceId}/runs`,
      `${base}/runs/run_doesnotexist`,
      `${services.api.url}/console/orgs/not-a-uuid/spaces/${org.defaultSpaceId}/runs`,
      `${services.api.url}/console/nowhere`,
    ]) {
      const res = await page.goto(url);
      expect(res?.status(), url).to.equal(404);
      expect(await page.textContent('h1'), url).to.equal('Not found');
      expect(await page.content(), url).not.to.include(otherRunId);
    }
  });

  it('shows a member only their own runs, and a viewer no action they cannot take', async () => {
    const ownerRun = (await org.client.get('/api/runs?limit=1&status=success')).body.data[0].id;
    const member = await newMember(services.api, org, 'member', 'console-member');
    const viewer = await newMember(services.api, org, 'viewer', 'console-viewer');
    const as = await consoleSession(ui.browser);
    try {
      await signInThroughForm(as.page, services.api.url, member.email, PASSWORD, `/console/orgs/${org.orgId}/spaces/${org.defaultSpaceId}/runs`);
      expect(await as.page.textContent('#runs-empty')).to.include('No runs yet');
      expect((await as.page.goto(`${base}/runs/${ownerRun}`))?.status()).to.equal(404);
      await as.page.context().clearCookies();
      await signInThroughForm(as.page, services.api.url, viewer.email, PASSWORD, `/console/orgs/${org.orgId}/spaces/${org.defaultSpaceId}/runs/${ownerRun}`);
      expect(await as.page.textContent('#run-summary')).to.include('Succeeded');
      expect(await as.page.locator('#replay-input').count()).to.equal(0);
      expect(await as.page.textContent('#input')).to.include('needs the agents:run permission');
      await as.page.goto(`${base}/runs`);
      expect(await as.page.locator('#runs-rows button').count()).to.equal(0);
      expect(as.violations).to.deep.equal([]);
    } finally {
      await as.close();
    }
  });

  it('takes a keyboard-only pass through the run list', async () => {
    await page.goto(`${base}/runs`);
    const names: string[] = [];
    for (let i = 0; i < 80; i++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement;
        return { tag: el.tagName, cls: el.className, text: (el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40), id: el.id };
      });
      names.push(`${focused.tag}:${focused.text || focused.id}`);
      if (focused.cls.includes('run-link')) break;
    }
    expect(names[0]).to.equal('A:Skip to content');
    expect(names.some((n) => n === 'A:Runs')).to.equal(true);
    expect(names.some((n) => n.startsWith('SELECT:') || n === 'SELECT:filter-status')).to.equal(true);
    expect(names[names.length - 1]).to.match(/^A:run_/);
    const target = names[names.length - 1].slice(2);
    await Promise.all([page.waitForURL(new RegExp(`/runs/${target}$`)), page.keyboard.press('Enter')]);
    await page.goBack();
    // j and k move between runs
    await page.locator('body').press('j');
    expect(await page.evaluate(() => document.activeElement?.className)).to.include('run-link');
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).closest('tr')?.previousElementSibling)).to.equal(null);
  });

  it('has landmarks and labels (ariaSnapshot), and no CSP violation on any page', async () => {
    const g = gate();
    services.model.script('still running', [
      async () => {
        await g.wait();
        return toolCall('output', { summary: 'finally' });
      },
    ]);
    const running = await launch('still running');
    await page.goto(`${base}/runs`);
    await page.waitForSelector(`#run-${running} .badge.status-running`, { timeout: 20_000 });
    await screenshot(page, 'runs-list');
    g.open();
    const list = await page.locator('body').ariaSnapshot();
    for (const expected of [
      '- banner:',
      '- navigation "Organization and space"',
      '- navigation "Console"',
      '- main:',
      'link "Skip to content"',
      'combobox "Status"',
      'combobox "Agent"',
      'textbox "End-user id"',
      'button "Apply filters"',
      'table "Runs, newest first"',
      'columnheader "Status"',
      'button "Sign out"',
    ]) {
      expect(list, expected).to.include(expected);
    }
    const id = (await org.client.get('/api/runs?limit=1&status=success')).body.data[0].id;
    await page.goto(`${base}/runs/${id}`);
    const detail = await page.locator('body').ariaSnapshot();
    for (const expected of [
      '- main:',
      'navigation "Breadcrumb"',
      'tablist "Run details"',
      'tab "Output" [selected]',
      'tab "Logs"',
      'tabpanel "Output"',
      'button "Copy id"',
      'region "Summary"',
    ]) {
      expect(detail, expected).to.include(expected);
    }
    await page.goto(`${services.api.url}/console`);
    expect(await page.locator('body').ariaSnapshot()).to.include('link "Default"');
    expect(ui.session.violations, ui.session.violations.join('\n')).to.deep.equal([]);
    expect(ui.session.errors, ui.session.errors.join('\n')).to.deep.equal([]);
  });
});
