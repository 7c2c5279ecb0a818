// The console's schedule pages (DESIGN.md 10, issue 32) in Debian's Chromium through
// playwright-core, on the real stack: create a schedule with a bad then a good cron (the error
// beside the field), a time zone, the input generated from the agent's schema; its next five
// firings as Temporal computes them; past ticks marked ran, refused and missed; edit; pause and
// resume; tenancy (another organization's schedule is the 404 page); no CSP violation; the
// landmarks and labels of ariaSnapshot(). Ticks are fired through Temporal, never by waiting.
// Screenshots go to docs/console/.
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { newOrg, PASSWORD } from '../support/api.ts';
import { screenshot, signInThroughForm, useConsole } from '../support/console-browser.ts';
import { importAgent } from '../support/packages.ts';
import { addFakeModel, type ModelServices, startModelServices } from '../support/run-services.ts';
import { fireSchedule } from '../support/schedules.ts';
import { stack } from '../support/stack.ts';

const INPUT = {
  type: 'object',
  required: ['topic'],
  properties: { topic: { type: 'string', title: 'Topic' }, depth: { type: 'integer', default: 2, title: 'Depth' } },
};

describe('console: schedules (browser)', function () {
  this.timeout(180_000);
  const ui = useConsole();
  let services: ModelServices;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let other: Awaited<ReturnType<typeof newOrg>>;
  let otherScheduleId: string;
  let connection: Connection;
  let temporal: TemporalClient;
  let page: Page;
  let base: string;
  let scheduleId: string;

  before(async () => {
    services = await startModelServices({
      output: { summary: 'scheduled' },
      workerEnv: { PLATFORM_RUN_LIMITS: JSON.stringify({ agent_memory_ceiling_mb: 256 }) },
    });
    connection = await Connection.connect({ address: stack().temporalAddress });
    temporal = new TemporalClient({ connection });
    org = await newOrg(services.api, 'console-schedules');
    other = await newOrg(services.api, 'console-schedules-other');
    for (const o of [org, other]) {
      await addFakeModel(o.client, services.model);
      await importAgent(o.client, { name: '@sched/writer', input: INPUT });
    }
    const theirs = await other.client.post('/api/agents/@sched/writer/schedules', { name: 'theirs', cron_expression: '0 4 * * *', input: { topic: 'secret' } });
    expect(theirs.status, theirs.text).to.equal(201);
    otherScheduleId = theirs.body.id;
    base = `${services.api.url}/console/orgs/${org.orgId}/spaces/${org.defaultSpaceId}`;
    page = ui.page;
    await signInThroughForm(page, services.api.url, org.email, PASSWORD);
  });
  after(async () => {
    // Nothing of this suite fires once it is over.
    const ids: string[] = services ? await services.api.knex('schedules').whereIn('org_id', [org?.orgId, other?.orgId].filter(Boolean)).pluck('id') : [];
    for (const id of ids)
      await temporal?.schedule
        .getHandle(id)
        .delete()
        .catch(() => undefined);
    await connection?.close();
    await services?.stop();
  });

  it('creates a schedule: a bad cron is refused beside its field, then a good one is taken', async () => {
    await page.goto(`${base}/schedules`);
    expect(await page.textContent('h1')).to.equal('Schedules');
    await Promise.all([page.waitForURL(`${base}/schedules/new`), page.getByRole('link', { name: 'New schedule' }).click()]);
    await page.getByLabel('Agent', { exact: true }).selectOption('@sched/writer');
    await Promise.all([page.waitForURL(/\/schedules\/new\?agent=/), page.getByRole('button', { name: 'Continue' }).click()]);
    await page.getByLabel('Name').fill('Morning digest');
    await page.getByLabel('Cron expression').fill('61 3 * * *');
    await page.getByLabel('Time zone').fill('Europe/Paris');
    await page.getByLabel('Topic').fill('tides');
    expect(await page.inputValue('#input-depth')).to.equal('2');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    await page.waitForSelector('#schedule-cron-error');
    expect(await page.textContent('#schedule-cron-error')).to.include('"61" is not a valid minute');
    expect(await page.getAttribute('#schedule-cron', 'aria-invalid')).to.equal('true');
    expect(await page.inputValue('#schedule-name')).to.equal('Morning digest');
    expect(await page.inputValue('#input-topic')).to.equal('tides');
    expect(await page.textContent('#form-errors')).to.include('The schedule was not created');
    // a zone that is no IANA name is said beside the zone
    await page.getByLabel('Cron expression').fill('0 3 * * *');
    await page.getByLabel('Time zone').fill('Mars/Olympus');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    await page.waitForSelector('#schedule-timezone-error');
    expect(await page.textContent('#schedule-timezone-error')).to.include('not an IANA time zone');
    expect(await page.locator('#schedule-cron-error').count()).to.equal(0);
    await page.getByLabel('Time zone').fill('Europe/Paris');
    await Promise.all([page.waitForURL(/\/schedules\/sch_/), page.getByRole('button', { name: 'Create schedule' }).click()]);
    scheduleId = new URL(page.url()).pathname.split('/').pop()!;
    expect(await page.textContent('.flash')).to.include('Schedule “Morning digest” created');
    const created = (await org.client.get(`/api/schedules/${scheduleId}`)).body;
    expect(created).to.include({ name: 'Morning digest', cron_expression: '0 3 * * *', timezone: 'Europe/Paris', enabled: true });
    expect(created.input).to.deep.equal({ topic: 'tides', depth: 2 });
  });

  it('shows the next five firings as Temporal computes them', async () => {
    await page.goto(`${base}/schedules/${scheduleId}`);
    const times = await page.$$eval('#next-firings li time', (ts) => ts.map((t) => t.getAttribute('datetime')!));
    expect(times).to.have.length(5);
    expect(times[0]).to.equal((await org.client.get(`/api/schedules/${scheduleId}`)).body.next_run_at);
    for (let i = 1; i < 5; i++) expect(Date.parse(times[i]) - Date.parse(times[i - 1])).to.be.within(23 * 3600_000, 25 * 3600_000);
    for (const text of await page.$$eval('#next-firings li', (lis) => lis.map((li) => li.textContent ?? ''))) expect(text).to.include('03:00 Europe/Paris');
  });

  it('marks past ticks ran, refused and missed', async () => {
    // As if made three days ago: the 03:00 firings since then did not happen.
    await services.api
      .knex('schedules')
      .where({ id: scheduleId })
      .update({ created_at: services.api.knex.raw("now() - interval '74 hours'") });
    const ran = await fireSchedule(temporal, scheduleId);
    expect(ran).to.match(/^run_/);
    expect((await org.client.get(`/api/runs/${ran}?wait=30`)).body.status).to.equal('success');
    // An input the agent no longer takes: the next tick is refused. (A tick's id holds its
    // second: the next second is another tick.)
    await new Promise((r) => setTimeout(r, 1100));
    await services.api
      .knex('schedules')
      .where({ id: scheduleId })
      .update({ input: JSON.stringify({ depth: 'deep' }) });
    const refused = await fireSchedule(temporal, scheduleId);
    expect((await org.client.get(`/api/runs/${refused}`)).body.status).to.equal('failed');
    await services.api
      .knex('schedules')
      .where({ id: scheduleId })
      .update({ input: JSON.stringify({ topic: 'tides', depth: 2 }) });

    await page.goto(`${base}/schedules/${scheduleId}`);
    const outcomes = await page.$$eval('#ticks tr.tick-row', (trs) => trs.map((tr) => tr.getAttribute('data-outcome')));
    expect(outcomes.slice(0, 2)).to.deep.equal(['refused', 'ran']);
    expect(outcomes.filter((o) => o === 'missed').length).to.be.at.least(3);
    const refusedRow = page.locator('#ticks tr.tick-row[data-outcome="refused"]').first();
    expect(await refusedRow.textContent())
      .to.include(refused!)
      .and.include('could not start');
    expect(await page.locator('#ticks tr.tick-row[data-outcome="missed"]').first().textContent()).to.include('03:00 Europe/Paris');
    for (const kind of ['ran', 'refused', 'missed', 'next']) expect(await page.locator(`svg.ticks g.tick-${kind}`).count(), kind).to.be.greaterThan(0);
    await screenshot(page, 'schedule');
  });

  it('edits the schedule, a bad cron refused beside its field', async () => {
    await page.goto(`${base}/schedules/${scheduleId}`);
    await page.getByLabel('Cron expression').fill('0 3 1 * 1');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForSelector('#schedule-cron-error');
    expect(await page.textContent('#schedule-cron-error')).to.include('not both');
    await page.getByLabel('Cron expression').fill('30 6 * * 1-5');
    await Promise.all([page.waitForURL(`${base}/schedules/${scheduleId}`), page.getByRole('button', { name: 'Save changes' }).click()]);
    expect(await page.textContent('.flash')).to.include('Saved: cron');
    expect((await org.client.get(`/api/schedules/${scheduleId}`)).body.cron_expression).to.equal('30 6 * * 1-5');
    for (const text of await page.$$eval('#next-firings li', (lis) => lis.map((li) => li.textContent ?? ''))) expect(text).to.include('06:30 Europe/Paris');
  });

  it('pauses and resumes, from the schedule and from the list', async () => {
    await page.goto(`${base}/schedules/${scheduleId}`);
    await Promise.all([page.waitForURL(`${base}/schedules/${scheduleId}`), page.getByRole('button', { name: 'Pause' }).click()]);
    expect(await page.textContent('.flash')).to.include('paused');
    expect(await page.getAttribute('[data-state]', 'data-state')).to.equal('paused');
    expect((await org.client.get(`/api/schedules/${scheduleId}`)).body).to.include({ enabled: false, next_run_at: null });
    expect(await page.textContent('main')).to.include('would fire once resumed');
    expect(await page.locator('#next-firings li').count()).to.equal(5);
    const weekly = await org.client.post('/api/agents/@sched/writer/schedules', {
      name: 'Weekly review',
      cron_expression: '0 9 * * 1',
      timezone: 'America/New_York',
      input: { topic: 'the week' },
    });
    expect(weekly.status, weekly.text).to.equal(201);
    await page.goto(`${base}/schedules`);
    const row = page.locator(`#schedule-${scheduleId}`);
    expect(await row.textContent()).to.include('Paused');
    expect(await page.textContent(`#schedule-${weekly.body.id}`))
      .to.include('Active')
      .and.include('America/New_York');
    await screenshot(page, 'schedules');
    await Promise.all([page.waitForURL(`${base}/schedules`), row.getByRole('button', { name: 'Resume' }).click()]);
    expect(await page.textContent('.flash')).to.include('resumed');
    expect(await row.textContent()).to.include('Active');
    const resumed = (await org.client.get(`/api/schedules/${scheduleId}`)).body;
    expect(resumed.enabled).to.equal(true);
    expect(resumed.next_run_at).to.be.a('string');
  });

  it("answers another organization's schedule with the 404 page", async () => {
    for (const url of [
      `${base}/schedules/${otherScheduleId}`,
      `${services.api.url}/console/orgs/${other.orgId}/spaces/${other.defaultSpaceId}/schedules/${otherScheduleId}`,
      `${services.api.url}/console/orgs/${other.orgId}/spaces/${other.defaultSpaceId}/schedules`,
      `${base}/schedules/sch_doesnotexist`,
    ]) {
      const res = await page.goto(url);
      expect(res?.status(), url).to.equal(404);
      expect(await page.textContent('h1'), url).to.equal('Not found');
      expect(await page.content(), url).not.to.include('secret');
    }
    // pausing it from this space's address is refused the same way, and changes nothing
    const status = await page.evaluate(async (action: string) => {
      const g = globalThis as any;
      const csrf = g.document.querySelector('input[name="csrf"]')?.value ?? '';
      return (
        await fetch(action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `csrf=${encodeURIComponent(csrf)}` })
      ).status;
    }, `${base}/schedules/${otherScheduleId}/pause`);
    expect(status).to.equal(404);
    expect((await other.client.get(`/api/schedules/${otherScheduleId}`)).body.enabled).to.equal(true);
  });

  it('has landmarks and labels (ariaSnapshot), and no CSP violation on any page', async () => {
    await page.goto(`${base}/schedules`);
    const list = await page.locator('body').ariaSnapshot();
    for (const expected of [
      '- banner:',
      '- navigation "Console"',
      '- main:',
      'link "Schedules"',
      'table "Schedules, newest first"',
      'link "New schedule"',
      'button "Pause"',
    ]) {
      expect(list, expected).to.include(expected);
    }
    await page.goto(`${base}/schedules/${scheduleId}`);
    const one = await page.locator('body').ariaSnapshot();
    for (const expected of [
      'navigation "Breadcrumb"',
      'region "Summary"',
      'region "Next five firings"',
      'region "Past ticks"',
      'img "Last',
      'table "Past ticks, newest first"',
      'textbox "Cron expression',
      'combobox "Time zone',
      'group "Input of each run"',
      'textbox "Topic',
      'button "Save changes"',
      'button "Delete schedule"',
    ]) {
      expect(one, expected).to.include(expected);
    }
    expect(ui.session.violations, ui.session.violations.join('\n')).to.deep.equal([]);
    expect(ui.session.errors, ui.session.errors.join('\n')).to.deep.equal([]);
  });
});
