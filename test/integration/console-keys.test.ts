// The console's API key and members pages (DESIGN.md 10, issue 32) in Debian's Chromium through
// playwright-core, on the real stack: a key created through the form by keyboard alone, shown
// once (gone on reload), answering 200 from the API, revoked in the console and then 401; the
// form's refusals beside their fields; organization and space members added, their space role
// changed and ended, and removed; tenancy (another organization's key, a revoked key: the 404
// page); landmarks and labels; no CSP violation.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { Client, newMember, newOrg, newUser, PASSWORD, startTestApi, type TestApi } from '../support/api.ts';
import { consoleSession, notNotFound, screenshot, signInThroughForm, useConsole } from '../support/console-browser.ts';
import { workerEnv } from '../support/worker.ts';

// Code passed to page.evaluate runs in the page; the project compiles without the DOM library.
declare const document: any;

describe('console: API keys and members (browser)', function () {
  this.timeout(120_000);
  const ui = useConsole();
  let api: TestApi;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let other: Awaited<ReturnType<typeof newOrg>>;
  let page: Page;
  let base: string;

  const focused = (p: Page) =>
    p.evaluate(() => {
      const el = document.activeElement;
      return { tag: el.tagName as string, id: el.id as string, value: (el.value ?? '') as string, text: (el.textContent ?? '').trim() as string };
    });

  before(async () => {
    api = await startTestApi(workerEnv());
    org = await newOrg(api, 'console-keys');
    other = await newOrg(api, 'console-keys-other');
    base = `${api.url}/console/orgs/${org.orgId}/spaces/${org.defaultSpaceId}`;
    page = ui.page;
    await signInThroughForm(page, api.url, org.email, PASSWORD);
  });
  after(async () => {
    await api?.close();
  });

  it('refuses a key without a name or with a past expiry, beside the fields', async () => {
    await page.goto(`${base}/api-keys`);
    await page.fill('#key-name', 'expired already');
    await page.fill('#key-expires', '2001-01-01T00:00');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForSelector('#key-expires-error');
    expect(await page.textContent('#key-expires-error')).to.include('in the future');
    expect(await page.getAttribute('#key-expires', 'aria-invalid')).to.equal('true');
    expect(await page.inputValue('#key-name')).to.equal('expired already');
    expect(await page.textContent('#form-errors')).to.include('could not be created');
    expect((await org.client.get('/api/api-keys')).body.data).to.deep.equal([]);
  });

  it('creates a key by keyboard alone: shown once, used against the API (200), revoked in the console (then 401)', async () => {
    await page.goto(`${base}/api-keys`);
    const stops: string[] = [];
    for (let i = 0; i < 60 && (await focused(page)).id !== 'key-name'; i++) {
      await page.keyboard.press('Tab');
      const f = await focused(page);
      stops.push(`${f.tag}:${f.id || f.text}`);
    }
    expect(stops[0]).to.equal('A:Skip to content');
    expect(stops).to.include('A:API keys');
    expect((await focused(page)).id).to.equal('key-name');
    await page.keyboard.type('deploy bot');
    // Tab through the permissions, checking runs:read and agents:run with the space bar.
    let f = await focused(page);
    for (let i = 0; i < 80 && !(f.tag === 'BUTTON' && f.text === 'Create key'); i++) {
      await page.keyboard.press('Tab');
      f = await focused(page);
      if (f.tag === 'INPUT' && (f.value === 'runs:read' || f.value === 'agents:run')) await page.keyboard.press('Space');
    }
    expect(f.text).to.equal('Create key');
    await Promise.all([page.waitForURL(/\/api-keys\/key_/), page.keyboard.press('Enter')]);
    const keyId = new URL(page.url()).pathname.split('/').pop()!;
    const key = (await page.textContent('#api-key-secret'))!.trim();
    expect(key).to.match(/^svc_[0-9A-Za-z]{36}$/);
    expect(await page.textContent('.flash')).to.include('not shown again');
    expect(await page.textContent('ul.scopes'))
      .to.include('runs:read')
      .and.include('agents:run')
      .and.not.include('agents:write');
    await page.reload();
    expect(await page.locator('#api-key-secret').count()).to.equal(0);
    expect(await page.content()).not.to.include(key);
    // The key works against the API, with what was checked.
    const bearer = new Client(api.url, { authorization: `Bearer ${key}` });
    expect((await bearer.get('/api/runs')).status).to.equal(200);
    const listed = (await org.client.get('/api/api-keys')).body.data.find((k: any) => k.id === keyId);
    expect(listed.scopes).to.have.members(['runs:read', 'agents:run']);
    // Revoked in the console, refused by the API at once.
    await page.goto(`${base}/api-keys`);
    expect(await page.textContent(`#key-${keyId}`))
      .to.include('deploy bot')
      .and.include(key.slice(0, 12));
    await screenshot(page, 'api-keys');
    await Promise.all([page.waitForURL(`${base}/api-keys`), page.getByRole('button', { name: 'Revoke deploy bot' }).click()]);
    expect(await page.textContent('.flash')).to.include('Revoked');
    expect(await page.locator(`#key-${keyId}`).count()).to.equal(0);
    expect((await bearer.get('/api/runs')).status).to.equal(401);
    expect(await notNotFound(page, [`${base}/api-keys/${keyId}`])).to.deep.equal([]);
  });

  it("answers another organization's key with the 404 page, and a member cannot revoke another's key", async () => {
    const theirs = await other.client.post('/api/api-keys', { name: 'theirs' });
    expect(theirs.status, theirs.text).to.equal(201);
    expect(
      await notNotFound(
        page,
        [
          `${base}/api-keys/${theirs.body.id}`,
          `${api.url}/console/orgs/${other.orgId}/spaces/${other.defaultSpaceId}/api-keys/${theirs.body.id}`,
          `${api.url}/console/orgs/${other.orgId}/spaces/${other.defaultSpaceId}/api-keys`,
        ],
        theirs.body.key,
      ),
    ).to.deep.equal([]);
    const mine = await org.client.post('/api/api-keys', { name: 'owner key' });
    const builder = await newMember(api, org, 'builder', 'console-keys-builder');
    const as = await consoleSession(ui.browser);
    try {
      await signInThroughForm(as.page, api.url, builder.email, PASSWORD, `/console/orgs/${org.orgId}/spaces/${org.defaultSpaceId}/api-keys`);
      expect(await as.page.textContent(`#key-${mine.body.id}`)).to.include('owner key');
      expect(await as.page.locator(`#key-${mine.body.id} button`).count()).to.equal(0);
      const csrf = await as.page.getAttribute('form[action="/console/sign-out"] input[name="csrf"]', 'value');
      const forged = await as.page.request.post(`${base}/api-keys/${mine.body.id}/revoke`, { form: { csrf: csrf! } });
      expect(forged.status()).to.equal(403);
      expect((await new Client(api.url, { authorization: `Bearer ${mine.body.key}` }).get('/api/runs')).status).to.equal(200);
    } finally {
      await as.close();
    }
  });

  it('adds an organization member, gives, changes and ends their space role, and removes them', async () => {
    const person = await newUser(api, 'console-keys-person');
    await page.goto(`${base}/members`);
    await page.fill('#member-email', 'nobody-here@example.com');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.waitForSelector('#member-email-error');
    expect(await page.textContent('#member-email-error')).to.include('No account uses');
    await page.fill('#member-email', person.email);
    await page.getByLabel('Organization role').selectOption('member');
    await Promise.all([page.waitForURL(`${base}/members`), page.getByRole('button', { name: 'Add member' }).click()]);
    expect(await page.textContent('.flash')).to.include(`${person.email} joined`);
    expect(await page.textContent(`#org-member-${person.userId}`)).to.include('member');
    // Joining gave them the member role in the default space: change it, then end it.
    expect(await page.textContent(`#space-member-${person.userId}`)).to.include('member');
    await page.locator(`#role-${person.userId}`).selectOption('preset:viewer');
    await Promise.all([
      page.waitForURL(`${base}/members`),
      page.locator(`#space-member-${person.userId}`).getByRole('button', { name: 'Change role' }).click(),
    ]);
    expect(await page.textContent(`#space-member-${person.userId}`)).to.include('viewer');
    const members = (await org.client.get(`/api/spaces/${org.defaultSpaceId}/members`)).body.data;
    expect(members.find((m: any) => m.userId === person.userId)).to.include({ preset_role: 'viewer' });
    await screenshot(page, 'members');
    await Promise.all([page.waitForURL(`${base}/members`), page.locator(`#space-member-${person.userId}`).getByRole('button', { name: 'Remove' }).click()]);
    expect(await page.locator(`#space-member-${person.userId}`).count()).to.equal(0);
    // Give the role back through the add form, then remove them from the organization.
    await page.getByLabel('Organization member').selectOption(person.userId);
    await page.getByLabel('Space role').selectOption('preset:builder');
    await Promise.all([page.waitForURL(`${base}/members`), page.getByRole('button', { name: 'Give role' }).click()]);
    expect(await page.textContent(`#space-member-${person.userId}`)).to.include('builder');
    await Promise.all([page.waitForURL(`${base}/members`), page.locator(`#org-member-${person.userId}`).getByRole('button', { name: 'Remove' }).click()]);
    expect(await page.locator(`#org-member-${person.userId}`).count()).to.equal(0);
    expect((await org.client.get(`/api/orgs/${org.orgId}/members`)).body.data.map((m: any) => m.userId)).not.to.include(person.userId);
  });

  it('shows a space member the members without the forms they cannot use', async () => {
    const member = await newMember(api, org, 'member', 'console-keys-member');
    const as = await consoleSession(ui.browser);
    try {
      await signInThroughForm(as.page, api.url, member.email, PASSWORD, `/console/orgs/${org.orgId}/spaces/${org.defaultSpaceId}/members`);
      expect(await as.page.textContent(`#org-member-${org.userId}`)).to.include('owner');
      expect(await as.page.locator('#member-email').count()).to.equal(0);
      expect(await as.page.locator('button:has-text("Change role")').count()).to.equal(0);
      expect(await as.page.locator(`#org-member-${member.userId} button`).textContent()).to.equal('Leave');
      // API keys need api-keys:read, which a member does not hold: the 403 page, and no entry in the navigation.
      const res = await as.page.goto(`${base}/api-keys`);
      expect(res?.status()).to.equal(403);
      expect(await as.page.locator('nav[aria-label="Console"] a:has-text("API keys")').count()).to.equal(0);
      expect(as.violations).to.deep.equal([]);
    } finally {
      await as.close();
    }
  });

  it('has landmarks and labels (ariaSnapshot), and no CSP violation on any page', async () => {
    await page.goto(`${base}/api-keys`);
    const keys = await page.locator('body').ariaSnapshot();
    for (const expected of [
      '- banner:',
      '- navigation "Console"',
      '- main:',
      'link "API keys"',
      'table "API keys in force, newest first"',
      'heading "Create a key"',
      'textbox "Name',
      'group "Permissions"',
      'checkbox "runs:read"',
      'button "Create key"',
    ]) {
      expect(keys, expected).to.include(expected);
    }
    await page.goto(`${base}/members`);
    const members = await page.locator('body').ariaSnapshot();
    for (const expected of [
      'table "Members of the organization"',
      'table "Members of the space"',
      'textbox "Email of an account',
      'combobox "Organization role"',
      'button "Add member"',
    ]) {
      expect(members, expected).to.include(expected);
    }
    expect(ui.session.violations, ui.session.violations.join('\n')).to.deep.equal([]);
    expect(ui.session.errors, ui.session.errors.join('\n')).to.deep.equal([]);
  });
});
