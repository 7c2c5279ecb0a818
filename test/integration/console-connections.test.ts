// The console's connections pages (DESIGN.md 10, issue 32) in Debian's Chromium through
// playwright-core, on the real stack with a worker (a hosted form's connection goes through the
// connectLogin workflow): connect through the console's link and the hosted form, the list
// following its connections live (a new one, one turning `needs_reconnection` as a refused
// OAuth refresh leaves it), reconnect in place, delete, tenancy (another organization's and
// another person's connection ids are the 404 page), landmarks and labels, no CSP violation.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { notifyConnectionUpdate } from '../../shared/integrations/connection-events.ts';
import type { ConnectionRow } from '../../shared/integrations/connections.ts';
import { freePort } from '../../shared/stack/ports.ts';
import { newMember, newOrg, PASSWORD, startTestApi, type TestApi } from '../support/api.ts';
import { markDocument, notNotFound, sameDocument, screenshot, signInThroughForm, useConsole } from '../support/console-browser.ts';
import { importIntegration } from '../support/packages.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

const CRM = '@acme/crm';
const crmAuth = {
  type: 'custom',
  credentials: {
    schema: { type: 'object', required: ['api_key'], properties: { api_key: { type: 'string', title: 'API key', writeOnly: true, minLength: 8 } } },
  },
  authorized_uris: ['https://api.acme.test/**'],
  delivery: { http: { in: 'header', name: 'Authorization', prefix: 'Bearer ', value: '{$credential.api_key}' } },
};

describe('console: connections (browser)', function () {
  this.timeout(180_000);
  const ui = useConsole();
  let api: TestApi;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let other: Awaited<ReturnType<typeof newOrg>>;
  let page: Page;
  let base: string;

  const connectFields = (client = org.client, apiKey = 'sk-live-123456') =>
    client.post(`/api/integrations/${CRM}/auths/key/connect/fields`, { credentials: { api_key: apiKey } });
  const row = async (id: string) => (await api.knex('connections').where({ id }).first()) as ConnectionRow;

  /** From a console page whose connect button was just pressed: follow the link, fill the hosted form, come back. */
  async function throughHostedForm(p: Page, apiKey: string): Promise<void> {
    await p.waitForSelector('#connect-link');
    expect(await p.textContent('main')).to.include('works once');
    await Promise.all([p.waitForURL(/\/api\/integrations\/connect\/start/), p.getByRole('link', { name: 'Continue to Acme CRM' }).click()]);
    await p.getByLabel('API key').fill(apiKey);
    await Promise.all([p.waitForURL(/\/api\/integrations\/connect\/submit/), p.getByRole('button', { name: 'Connect' }).click()]);
    expect(await p.textContent('body')).to.include('Connected to Acme CRM');
  }

  before(async () => {
    // The connect links point at PUBLIC_URL: the API's own address here.
    const port = await freePort();
    api = await startTestApi(workerEnv({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` }));
    worker = await startTestWorker();
    org = await newOrg(api, 'console-conn');
    other = await newOrg(api, 'console-conn-other');
    await importIntegration(org.client, CRM, 'Acme CRM', { key: crmAuth });
    await importIntegration(other.client, CRM, 'Acme CRM', { key: crmAuth });
    base = `${api.url}/console/orgs/${org.orgId}/spaces/${org.defaultSpaceId}`;
    page = ui.page;
    await signInThroughForm(page, api.url, org.email, PASSWORD);
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
  });

  it('connects through the console’s link and the hosted form; an open list shows the new connection without reload', async () => {
    await page.goto(`${base}/connections`);
    expect(await page.textContent('#connections-body')).to.include('no connection');
    const watcher = await ui.session.context.newPage();
    await watcher.goto(`${base}/connections`);
    await markDocument(watcher);
    await page.getByRole('button', { name: 'Connect Acme CRM (key)' }).click();
    await throughHostedForm(page, 'sk-live-first-1');
    const [made] = (await org.client.get('/api/connections')).body.data;
    expect(made).to.include({ integration_package_id: CRM, auth_key: 'key', needs_reconnection: false });
    await watcher.waitForSelector(`#connection-${made.id} [data-status="connected"]`, { timeout: 15_000 });
    expect(await sameDocument(watcher)).to.equal(true);
    await watcher.close();
  });

  it('shows a connection turning needs_reconnection without reload, then reconnects it in place', async () => {
    const made = await connectFields();
    expect(made.status, made.text).to.equal(201);
    const id = made.body.id as string;
    await page.goto(`${base}/connections`);
    await page.waitForSelector(`#connection-${id} [data-status="connected"]`);
    await markDocument(page);
    // What a refused OAuth refresh does (activities/oauth2.ts): mark it, then tell the owner's streams.
    await api.knex('connections').where({ id }).update({ needs_reconnection: true });
    await notifyConnectionUpdate(api.knex, await row(id));
    await page.waitForSelector(`#connection-${id} [data-status="needs_reconnection"]`, { timeout: 15_000 });
    expect(await sameDocument(page)).to.equal(true);
    expect(await page.textContent('#connections-live')).to.include('changed');
    await screenshot(page, 'connections');
    // Reconnect: a link that refreshes the same connection.
    await page
      .locator(`#connection-${id}`)
      .getByRole('button', { name: /^Reconnect/ })
      .click();
    expect(await page.textContent('main')).to.include(`refreshes ${id} in place`);
    await throughHostedForm(page, 'sk-live-second-2');
    const after = await row(id);
    expect(after.needs_reconnection).to.equal(false);
    await page.goto(`${base}/connections/${id}`);
    expect(await page.textContent('#connection-summary'))
      .to.include('Connected')
      .and.include(CRM);
  });

  it('deletes a connection from its page', async () => {
    const made = await connectFields(org.client, 'sk-to-delete-3');
    const id = made.body.id as string;
    await page.goto(`${base}/connections/${id}`);
    expect(await page.textContent('#delete-help')).to.include('Schedules you created');
    await Promise.all([page.waitForURL(`${base}/connections`), page.getByRole('button', { name: 'Delete connection' }).click()]);
    expect(await page.textContent('.flash')).to.include('Deleted the connection');
    expect(await page.locator(`#connection-${id}`).count()).to.equal(0);
    expect((await org.client.get(`/api/connections/${id}`)).status).to.equal(404);
  });

  it("answers another organization's or another person's connection with the 404 page", async () => {
    const theirs = (await connectFields(other.client, 'sk-other-org-4')).body.id as string;
    const member = await newMember(api, org, 'member', 'console-conn-member');
    const members = (await connectFields(member.client, 'sk-member-5')).body.id as string;
    const wrong = await notNotFound(page, [
      `${base}/connections/${theirs}`,
      `${api.url}/console/orgs/${other.orgId}/spaces/${other.defaultSpaceId}/connections/${theirs}`,
      `${api.url}/console/orgs/${other.orgId}/spaces/${other.defaultSpaceId}/connections`,
      `${base}/connections/${members}`,
      `${base}/connections/conn_nope`,
    ]);
    expect(wrong).to.deep.equal([]);
    // Nor does a delete of someone else's connection do anything.
    await page.goto(`${base}/connections`);
    const csrf = await page.getAttribute('form[action$="/connections/connect"] input[name="csrf"]', 'value');
    const res = await page.request.post(`${base}/connections/${members}/delete`, { form: { csrf: csrf! } });
    expect(res.status()).to.equal(404);
    expect((await member.client.get(`/api/connections/${members}`)).status).to.equal(200);
  });

  it('has landmarks and labels (ariaSnapshot), and no CSP violation on any page', async () => {
    await page.goto(`${base}/connections`);
    const snap = await page.locator('body').ariaSnapshot();
    for (const expected of [
      '- banner:',
      '- navigation "Console"',
      '- main:',
      'link "Connections"',
      'heading "Your connections"',
      'table "Your connections, newest first"',
      'table "Integrations you can connect"',
      'button "Connect Acme CRM (key)"',
      'columnheader "Status"',
    ]) {
      expect(snap, expected).to.include(expected);
    }
    expect(ui.session.violations, ui.session.violations.join('\n')).to.deep.equal([]);
    expect(ui.session.errors, ui.session.errors.join('\n')).to.deep.equal([]);
  });
});
