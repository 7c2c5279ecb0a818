// The console's webhook pages (DESIGN.md 10, issue 32) in Debian's Chromium through
// playwright-core, on the real stack with a worker and an HTTPS receiver: the list with each
// webhook's delivery health, a test ping whose attempt appears without reload, a failing
// receiver's delivery then a retry that succeeds, the replay of a window, the secret's rotation
// (shown once, gone on reload, and the secret shown is the one that signs), tenancy (another
// organization's webhook, and an organization-level webhook for a space member, are the 404
// page), landmarks and labels, no CSP violation.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { newMember, newOrg, PASSWORD } from '../support/api.ts';
import { consoleSession, markDocument, notNotFound, sameDocument, screenshot, signInThroughForm, useConsole } from '../support/console-browser.ts';
import { importAgent } from '../support/packages.ts';
import { addFakeModel, type RunServices, startRunServices } from '../support/run-services.ts';

describe('console: webhooks (browser)', function () {
  this.timeout(180_000);
  const ui = useConsole();
  let services: RunServices;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let other: Awaited<ReturnType<typeof newOrg>>;
  let page: Page;
  let base: string;
  let failing = true;
  let ok: { id: string; secret: string };
  let bad: { id: string; secret: string };

  async function create(client: typeof org.client, body: Record<string, unknown>) {
    const res = await client.post('/api/webhooks', { level: 'space', spaceId: org.defaultSpaceId, events: ['run.success'], ...body });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; secret: string };
  }

  before(async () => {
    services = await startRunServices({ output: { summary: 'done' } });
    services.receiver.respond((r) => (r.path === '/failing' && failing ? 500 : 200));
    org = await newOrg(services.api, 'console-hooks');
    other = await newOrg(services.api, 'console-hooks-other');
    await addFakeModel(org.client, services.model);
    await importAgent(org.client, { name: '@hooks/agent' });
    ok = await create(org.client, { url: services.receiver.url('/ok') });
    bad = await create(org.client, { url: services.receiver.url('/failing'), events: ['run.failed'] });
    base = `${services.api.url}/console/orgs/${org.orgId}/spaces/${org.defaultSpaceId}`;
    page = ui.page;
    await signInThroughForm(page, services.api.url, org.email, PASSWORD);
  });
  after(async () => {
    await services?.stop();
  });

  it('sends a test ping whose attempt shows in the deliveries without reload', async () => {
    await page.goto(`${base}/webhooks/${ok.id}`);
    expect(await page.textContent('#deliveries-body')).to.include('No delivery yet');
    await Promise.all([page.waitForURL(/#deliveries$/), page.getByRole('button', { name: 'Send test ping' }).click()]);
    expect(await page.textContent('.flash')).to.include('Sent a test.ping');
    await markDocument(page);
    const row = page.locator('#deliveries-rows tr[data-status="success"]');
    await row.first().waitFor({ timeout: 20_000 });
    expect(await sameDocument(page)).to.equal(true);
    expect(await row.first().textContent())
      .to.include('test.ping')
      .and.include('HTTP 200');
  });

  it('shows a failing receiver’s delivery with its status, latency and attempt, then a retry that succeeds', async () => {
    await page.goto(`${base}/webhooks/${bad.id}`);
    await page.getByRole('button', { name: 'Send test ping' }).click();
    const failed = page.locator('#deliveries-rows tr[data-status="failed"]');
    await failed.first().waitFor({ timeout: 20_000 });
    const cells = await failed.first().locator('td').allTextContents();
    expect(cells[1]).to.include('Failed').and.include('HTTP 500');
    expect(cells[2]).to.match(/\d+ ms|s$/);
    expect(cells[3]).to.equal('1');
    await screenshot(page, 'webhook-deliveries');
    failing = false;
    await Promise.all([page.waitForURL(/#deliveries$/), failed.first().getByRole('button', { name: 'Retry' }).click()]);
    expect(await page.textContent('.flash')).to.include('as attempt 2');
    const retried = page.locator('#deliveries-rows tr[data-status="success"]');
    await retried.first().waitFor({ timeout: 20_000 });
    expect((await retried.first().locator('td').allTextContents())[3]).to.equal('2');
    const api = (await org.client.get(`/api/webhooks/${bad.id}/deliveries`)).body.data.map((d: any) => [d.status, d.attempt]);
    expect(api).to.deep.equal([
      ['success', 2],
      ['failed', 1],
    ]);
  });

  it('replays a window of events; a bad window is said beside its field', async () => {
    const run = await org.client.post('/api/agents/@hooks/agent/run', { input: {} });
    expect((await org.client.get(`/api/runs/${run.body.id}?wait=30`)).body.status).to.equal('success');
    for (let i = 0; i < 100 && !(await services.api.knex('webhook_deliveries').where({ webhook_id: ok.id, event_type: 'run.success' }).first()); i++)
      await new Promise((r) => setTimeout(r, 100));
    await page.goto(`${base}/webhooks/${ok.id}`);
    await page.fill('#replay-since', '2099-01-01T00:00');
    await page.getByRole('button', { name: 'Replay events' }).click();
    await page.waitForSelector('#replay-since-error');
    expect(await page.textContent('#replay-since-error')).to.include('since must be in the past');
    expect(await page.getAttribute('#replay-since', 'aria-invalid')).to.equal('true');
    await page.fill('#replay-since', new Date(Date.now() - 3600_000).toISOString().slice(0, 16));
    await Promise.all([page.waitForURL(/#deliveries$/), page.getByRole('button', { name: 'Replay events' }).click()]);
    expect(await page.textContent('.flash')).to.match(/Replaying 1 event of 1/);
    await page.waitForSelector('#deliveries-rows tr:has-text("run.success"):has(td.num:text-is("2"))', { timeout: 20_000 });
  });

  it('rotates the secret: shown once, gone on reload, and it is the secret that signs', async () => {
    await page.goto(`${base}/webhooks/${ok.id}`);
    await page.getByLabel('Keep the previous secret signing for').selectOption('86400');
    await Promise.all([page.waitForURL(`${base}/webhooks/${ok.id}`), page.getByRole('button', { name: 'Rotate secret' }).click()]);
    const secret = (await page.textContent('#webhook-secret'))!.trim();
    expect(secret)
      .to.match(/^whsec_/)
      .and.not.equal(ok.secret);
    expect(await page.textContent('.reveal')).to.include('Shown this once');
    expect(await page.textContent('main')).to.include('both secrets sign until');
    await page.reload();
    expect(await page.locator('#webhook-secret').count()).to.equal(0);
    expect(await page.content()).not.to.include(secret);
    // Another visit does not bring it back either.
    await page.goto(`${base}/webhooks/${ok.id}`);
    expect(await page.content()).not.to.include(secret);
    const before = services.receiver.requests.length;
    expect((await org.client.post(`/api/webhooks/${ok.id}/test`)).status).to.equal(200);
    const [ping] = (await services.receiver.waitFor(before + 1)).slice(before).filter((r) => r.path === '/ok');
    expect(new Webhook(secret).verify(ping.body, ping.headers as Record<string, string>)).to.be.an('object');
    expect(new Webhook(ok.secret).verify(ping.body, ping.headers as Record<string, string>)).to.be.an('object');
  });

  it('lists the webhooks with their delivery health', async () => {
    await page.goto(`${base}/webhooks`);
    const okRow = await page.textContent(`#webhook-${ok.id}`);
    expect(okRow).to.include('This space').and.include('delivered');
    expect(await page.textContent(`#webhook-${bad.id}`)).to.include('1 of 2 attempts delivered');
    await screenshot(page, 'webhooks');
  });

  it("answers another organization's webhook, and an organization webhook to a space member, with the 404 page", async () => {
    const theirs = await create(other.client, { url: services.receiver.url('/other'), spaceId: other.defaultSpaceId });
    const orgLevel = await org.client.post('/api/webhooks', { level: 'org', url: services.receiver.url('/org'), events: ['run.success'] });
    expect(orgLevel.status, orgLevel.text).to.equal(201);
    expect(
      await notNotFound(page, [
        `${base}/webhooks/${theirs.id}`,
        `${services.api.url}/console/orgs/${other.orgId}/spaces/${other.defaultSpaceId}/webhooks/${theirs.id}`,
        `${base}/webhooks/wh_nope`,
      ]),
    ).to.deep.equal([]);
    // The owner sees it; a space member (org role member) does not.
    await page.goto(`${base}/webhooks`);
    expect(await page.textContent(`#webhook-${orgLevel.body.id}`)).to.include('Organization');
    const member = await newMember(services.api, org, 'member', 'console-hooks-member');
    const as = await consoleSession(ui.browser);
    try {
      await signInThroughForm(as.page, services.api.url, member.email, PASSWORD);
      expect(await notNotFound(as.page, [`${base}/webhooks/${orgLevel.body.id}`])).to.deep.equal([]);
      await as.page.goto(`${base}/webhooks/${ok.id}`);
      expect(await as.page.textContent('main')).to.include('need webhooks:write');
      expect(await as.page.locator('button:has-text("Rotate secret")').count()).to.equal(0);
      // A forged rotation is refused like the API refuses it.
      const csrf = await as.page.getAttribute('form[action="/console/sign-out"] input[name="csrf"]', 'value');
      const res = await as.page.request.post(`${base}/webhooks/${ok.id}/rotate`, { form: { csrf: csrf!, windowSeconds: '0' } });
      expect(res.status()).to.equal(403);
      expect(as.violations).to.deep.equal([]);
    } finally {
      await as.close();
    }
  });

  it('has landmarks and labels (ariaSnapshot), and no CSP violation on any page', async () => {
    await page.goto(`${base}/webhooks/${bad.id}`);
    const snap = await page.locator('body').ariaSnapshot();
    for (const expected of [
      '- banner:',
      '- navigation "Console"',
      '- main:',
      'navigation "Breadcrumb"',
      'link "Webhooks"',
      'region "Webhook"',
      'button "Send test ping"',
      'combobox "Keep the previous secret signing for"',
      'textbox "Events since (UTC)',
      'checkbox "Only events whose last delivery failed"',
      'table "Delivery attempts, newest first"',
      'button "Retry"',
    ]) {
      expect(snap, expected).to.include(expected);
    }
    await page.goto(`${base}/webhooks`);
    expect(await page.locator('body').ariaSnapshot()).to.include('table "Webhooks, newest first"');
    expect(ui.session.violations, ui.session.violations.join('\n')).to.deep.equal([]);
    expect(ui.session.errors, ui.session.errors.join('\n')).to.deep.equal([]);
  });
});
