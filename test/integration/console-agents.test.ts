// The console's overview and agent pages (DESIGN.md 10, issue 32) in Debian's Chromium through
// playwright-core, on the real stack: the agent list, an agent's versions, the launch form
// generated from its input schema (`property_order`, `ui_hints`, a file input through the
// uploads flow), a refusal beside its field, a launch followed to `success` on the run page,
// connection readiness with the connections pages' connect button, the overview's figures
// against the API's own counts, tenancy (another organization's agent is the 404 page), no CSP
// violation, and the landmarks and labels of ariaSnapshot(). Screenshots go to docs/console/.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { formatCost } from '../../api/console/format.ts';
import { freePort } from '../../shared/stack/ports.ts';
import { type Client, newOrg, PASSWORD } from '../support/api.ts';
import { screenshot, signInThroughForm, useConsole } from '../support/console-browser.ts';
import { toolCall } from '../support/fake-model.ts';
import { agentManifest, authorizationAuth, importAgent, importIntegration, importManifest } from '../support/packages.ts';
import { addFakeModel, type ModelServices, startModelServices } from '../support/run-services.ts';

// Code passed to page.evaluate runs in the page; the project compiles without the DOM library.
declare const document: any;

const INPUT = {
  type: 'object',
  required: ['topic'],
  properties: {
    tone: { type: 'string', enum: ['plain', 'formal'], default: 'plain', title: 'Tone' },
    words: { type: 'integer', minimum: 10, maximum: 500, default: 100, title: 'Words' },
    topic: { type: 'string', minLength: 3, title: 'Topic', description: 'What to write about.' },
    notes: { type: 'string', format: 'file', title: 'Notes' },
    draft: { type: 'boolean', title: 'Draft' },
  },
};

/** The writer in two versions: the later one with its form's order, hints and file constraints. */
async function importWriter(client: Client): Promise<void> {
  await importAgent(client, {
    name: '@acme/writer',
    input: { type: 'object', properties: { topic: { type: 'string' } } },
    prompt: 'Write about {{input.topic}}.',
  });
  const m = agentManifest({ name: '@acme/writer', version: '1.1.0', input: INPUT });
  const input = {
    ...(m.input as object),
    property_order: ['topic', 'words', 'tone', 'notes', 'draft'],
    ui_hints: { topic: { placeholder: 'e.g. the tides' } },
    file_constraints: { notes: { accept: '.txt,text/plain', max_size: 4096 } },
  };
  await importManifest(client, { ...m, display_name: 'Writer', description: 'Writes a short text on a topic.', input }, 'Write about {{input.topic}}.');
}

describe('console: overview and agents (browser)', function () {
  this.timeout(180_000);
  const ui = useConsole();
  let services: ModelServices;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let other: Awaited<ReturnType<typeof newOrg>>;
  let page: Page;
  let base: string;

  before(async () => {
    // The connect links point at PUBLIC_URL: the API's own address here.
    const port = await freePort();
    services = await startModelServices({
      apiEnv: { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` },
      workerEnv: { PLATFORM_RUN_LIMITS: JSON.stringify({ agent_memory_ceiling_mb: 256 }) },
    });
    services.model.setFallback(() => toolCall('output', { summary: 'done' }, { prompt_tokens: 1200, completion_tokens: 300 }));
    org = await newOrg(services.api, 'console-agents');
    other = await newOrg(services.api, 'console-agents-other');
    for (const o of [org, other]) await addFakeModel(o.client, services.model, { inputCostPerMTok: 1, outputCostPerMTok: 2 });
    await importWriter(org.client);
    await importIntegration(org.client, '@acme/crm', 'Acme CRM', { main: authorizationAuth(['https://api.acme.test/**'], 'api_key', 'Bearer ') });
    await importManifest(
      org.client,
      { ...agentManifest({ name: '@acme/crm-notes', dependencies: { integrations: { '@acme/crm': '^1.0.0' } } }), display_name: 'CRM notes' },
      'Use the CRM.',
    );
    await importAgent(other.client, { name: '@other/secret', input: { type: 'object', properties: { topic: { type: 'string' } } } });
    base = `${services.api.url}/console/orgs/${org.orgId}/spaces/${org.defaultSpaceId}`;
    page = ui.page;
    await signInThroughForm(page, services.api.url, org.email, PASSWORD);
  });
  after(async () => {
    await services?.stop();
  });

  it('lists the agents with their versions and leads to an agent', async () => {
    await page.goto(`${base}/agents`);
    expect(await page.textContent('h1')).to.equal('Agents');
    const row = page.locator('tr', { hasText: '@acme/writer' });
    expect(await row.textContent())
      .to.include('1.1.0')
      .and.include('Writes a short text');
    expect(await page.locator('tr', { hasText: '@acme/crm-notes' }).count()).to.equal(1);
    expect(await page.content()).not.to.include('@other/secret');
    await Promise.all([page.waitForURL(`${base}/agents/@acme/writer`), row.getByRole('link', { name: 'Writer' }).click()]);
    expect(await page.textContent('h1')).to.include('Writer');
    const versions = await page.$$eval('table.versions tbody tr code', (cs) => cs.map((c) => c.textContent));
    expect(versions).to.deep.equal(['1.1.0', '1.0.0']);
  });

  it('generates the launch form from the input schema: order, hints, defaults, kinds', async () => {
    await page.goto(`${base}/agents/@acme/writer#launch`);
    const names = await page.$$eval('.launch-form [name^="input."]', (els) => els.map((e) => e.getAttribute('name')));
    expect(names).to.deep.equal(['input.topic', 'input.words', 'input.tone', 'input.notes', 'input.draft']);
    expect(await page.getAttribute('#input-topic', 'placeholder')).to.equal('e.g. the tides');
    expect(await page.getAttribute('#input-topic', 'required')).to.equal('');
    expect(await page.textContent('#input-topic-help')).to.include('What to write about.');
    expect(await page.getAttribute('#input-words', 'type')).to.equal('number');
    expect(await page.inputValue('#input-words')).to.equal('100');
    expect(await page.inputValue('#input-tone')).to.equal('plain');
    expect(await page.textContent('#input-notes-help'))
      .to.include('.txt,text/plain')
      .and.include('4,096 bytes');
    // the file picker appears with script: it uploads through the API
    await page.waitForSelector('#input-notes-file:not([hidden])');
    expect(await page.getAttribute('#input-notes-file', 'accept')).to.equal('.txt,text/plain');
    // the form of the earlier version has its own fields
    await page.goto(`${base}/agents/@acme/writer?version=1.0.0#launch`);
    expect(await page.$$eval('.launch-form [name^="input."]', (els) => els.map((e) => e.getAttribute('name')))).to.deep.equal(['input.topic']);
  });

  it('launches from the generated form, a file uploaded through the uploads flow, and the run turns success', async () => {
    await page.goto(`${base}/agents/@acme/writer#launch`);
    // a value the schema refuses comes back beside its field, as typed
    await page.fill('#input-topic', 'ab');
    await page.getByRole('button', { name: /^Launch @acme\/writer@1\.1\.0$/ }).click();
    await page.waitForSelector('#input-topic-error');
    expect(await page.textContent('#input-topic-error')).to.match(/fewer than 3/);
    expect(await page.getAttribute('#input-topic', 'aria-invalid')).to.equal('true');
    expect(await page.inputValue('#input-topic')).to.equal('ab');
    expect(await page.textContent('#form-errors')).to.include('The run was not launched');

    await page.goto(`${base}/agents/@acme/writer#launch`);
    await page.fill('#input-topic', 'the tides');
    await page.fill('#input-words', '250');
    await page.selectOption('#input-tone', 'formal');
    await page.setInputFiles('#input-notes-file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('high tide at noon\n') });
    await page.waitForFunction(() => /^upl_/.test(document.querySelector('#input-notes')?.value ?? ''), undefined, { timeout: 10_000 });
    expect(await page.textContent('#input-notes-upload')).to.include('Uploaded notes.txt');
    await page.selectOption('#input-draft', 'true');
    await screenshot(page, 'agent-launch');
    await Promise.all([page.waitForURL(/\/runs\/run_/), page.getByRole('button', { name: /^Launch @acme\/writer@1\.1\.0$/ }).click()]);
    const runId = new URL(page.url()).pathname.split('/').pop()!;
    expect(await page.textContent('.flash')).to.include(`Launched ${runId}`);
    await page.waitForSelector('#run-summary .badge.status-success', { timeout: 30_000 });
    const run = (await org.client.get(`/api/runs/${runId}`)).body;
    expect(run.status).to.equal('success');
    expect(run.version).to.equal('1.1.0');
    expect(run.input).to.include({ topic: 'the tides', words: 250, tone: 'formal', draft: true });
    expect(run.input.notes).to.match(/^file_/);
    const files = (await org.client.get(`/api/files?runId=${runId}`)).body;
    expect(files.data.map((f: { name: string }) => f.name)).to.include('notes.txt');
  });

  it('shows connection readiness, and its connect button opens the hosted connect form', async () => {
    await page.goto(`${base}/agents/@acme/crm-notes`);
    const row = page.locator('#connections tr[data-integration="@acme/crm"]');
    expect(await row.locator('[data-readiness]').getAttribute('data-readiness')).to.equal('missing');
    expect(await page.textContent('#launch')).to.include('refused until @acme/crm has a usable connection');
    // the connections pages' connect button: a page leading to the hosted link, then the form
    await Promise.all([page.waitForURL(`${base}/connections/connect`), row.getByRole('button', { name: 'Connect @acme/crm (main)' }).click()]);
    await Promise.all([page.waitForURL(/\/api\/integrations\/connect\/start\?token=/), page.locator('#connect-link').click()]);
    expect(await page.textContent('h1')).to.equal('Acme CRM');
    await page.getByLabel(/api key/i).fill('k-1');
    await Promise.all([page.waitForURL(/\/api\/integrations\/connect\/submit/), page.getByRole('button', { name: 'Connect' }).click()]);
    expect(await page.textContent('body')).to.include('Connected to Acme CRM');
    // connected, the agent page says so
    await page.goto(`${base}/agents/@acme/crm-notes`);
    expect(await page.getAttribute('#connections [data-readiness]', 'data-readiness')).to.equal('ready');
    expect(await page.textContent('#launch')).not.to.include('refused until');
  });

  it("shows the overview's figures as the API counts them", async () => {
    services.model.script('overview-fails', [() => ({ status: 500, body: { error: 'model down' } })]);
    const failed = await org.client.post('/api/agents/@acme/writer/run', { input: { topic: 'overview-fails' } });
    expect(failed.status, failed.text).to.equal(201);
    for (const topic of ['overview one', 'overview two'])
      expect((await org.client.post('/api/agents/@acme/writer/run', { input: { topic } })).status).to.equal(201);
    for (const id of (await org.client.get('/api/runs?limit=100')).body.data.map((r: { id: string }) => r.id)) await org.client.get(`/api/runs/${id}?wait=30`);
    await page.goto(`${base}/overview?period=24h`);
    expect(await page.textContent('h1')).to.equal('Overview');
    const all = await org.client.get('/api/runs?limit=100');
    for (const status of ['success', 'failed', 'timeout', 'cancelled', 'running', 'pending']) {
      const apiCount = (await org.client.get(`/api/runs?status=${status}&limit=1`)).body.total;
      expect(await page.textContent(`#overview-totals tr[data-status="${status}"] .count`), status).to.equal(String(apiCount));
    }
    expect(await page.textContent('#overview-totals tr[data-status="all"] .count')).to.equal(String(all.body.total));
    expect(await page.textContent('[data-figure="total"] .value')).to.equal(String(all.body.total));
    expect(Number(await page.textContent('#overview-totals tr[data-status="failed"] .count'))).to.be.at.least(1);
    const spend = all.body.data.reduce((sum: number, r: { usage: { costUsd: number } }) => sum + r.usage.costUsd, 0);
    expect(await page.textContent('[data-figure="spend"] .value')).to.equal(formatCost(spend));
    // the chart draws the same figures: the bars' titles add up to each status's count
    const titles: string[] = await page.$$eval('svg.runs-chart g.seg title', (ts) => ts.map((t) => t.textContent ?? ''));
    const succeeded = titles.filter((t) => t.endsWith(' succeeded')).reduce((sum, t) => sum + Number(/UTC: (\d+) /.exec(t)![1]), 0);
    expect(succeeded).to.equal((await org.client.get('/api/runs?status=success&limit=1')).body.total);
    // each figure leads to the run list showing exactly those runs
    await Promise.all([page.waitForURL(/\/runs\?status=failed&period=24h$/), page.locator('#overview-totals tr[data-status="failed"] .count').click()]);
    expect(await page.textContent('#runs-count')).to.match(new RegExp(`^${(await org.client.get('/api/runs?status=failed&limit=1')).body.total} runs? match`));
    await page.goto(`${base}/overview`);
    await screenshot(page, 'overview');
  });

  it('opens on the overview from the space picker and the space address', async () => {
    await page.goto(`${services.api.url}/console`);
    await Promise.all([page.waitForURL(`${base}/overview`), page.getByRole('link', { name: 'Default' }).click()]);
    await page.goto(`${services.api.url}/console/orgs/${org.orgId}/spaces/${org.defaultSpaceId}`);
    expect(page.url()).to.equal(`${base}/overview`);
  });

  it("answers another organization's agent with the 404 page", async () => {
    for (const url of [
      `${base}/agents/@other/secret`,
      `${base}/agents/@other/secret?version=1.0.0`,
      `${services.api.url}/console/orgs/${other.orgId}/spaces/${other.defaultSpaceId}/agents/@other/secret`,
      `${services.api.url}/console/orgs/${other.orgId}/spaces/${other.defaultSpaceId}/overview`,
      `${base}/agents/not-a-scope/x`,
    ]) {
      const res = await page.goto(url);
      expect(res?.status(), url).to.equal(404);
      expect(await page.textContent('h1'), url).to.equal('Not found');
    }
    // and a launch of it from this space's form address is refused the same way
    const forged = await page.evaluate(async (action: string) => {
      const csrf = document.querySelector('input[name="csrf"]')?.value ?? '';
      const res = await fetch(action, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `csrf=${encodeURIComponent(csrf)}&input.topic=stolen`,
      });
      return res.status;
    }, `${base}/agents/@other/secret/run`);
    expect(forged).to.equal(404);
    expect((await other.client.get('/api/runs?limit=100')).body.total).to.equal(0);
  });

  it('has landmarks and labels (ariaSnapshot), and no CSP violation on any page', async () => {
    await page.goto(`${base}/overview`);
    const overview = await page.locator('body').ariaSnapshot();
    for (const expected of [
      '- banner:',
      '- navigation "Console"',
      '- main:',
      'link "Overview"',
      'link "Agents"',
      'link "Schedules"',
      'combobox "Period"',
      'img "Runs by status',
      'table "Runs created in the last 24 hours"',
      'img "Spend',
    ]) {
      expect(overview, expected).to.include(expected);
    }
    await page.goto(`${base}/agents`);
    expect(await page.locator('body').ariaSnapshot()).to.include('table "Agents of this space"');
    await screenshot(page, 'agents');
    await page.goto(`${base}/agents/@acme/writer`);
    const agent = await page.locator('body').ariaSnapshot();
    for (const expected of [
      'navigation "Breadcrumb"',
      'region "Launch a run of version 1.1.0"',
      'textbox "Topic',
      'spinbutton "Words',
      'combobox "Tone',
      'button "Choose a file for Notes"',
      'region "Connections"',
      'region "Versions"',
      'table "Published versions"',
      'region "Recent runs"',
    ]) {
      expect(agent, expected).to.include(expected);
    }
    expect(ui.session.violations, ui.session.violations.join('\n')).to.deep.equal([]);
    expect(ui.session.errors, ui.session.errors.join('\n')).to.deep.equal([]);
  });
});
