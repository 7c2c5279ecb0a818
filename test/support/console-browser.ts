// The console's browser tests (test/integration/console-*.test.ts) drive Debian's Chromium
// through playwright-core: one browser per suite, pages that report every
// `securitypolicyviolation` (there must be none), signing in through the sign-in form, and
// screenshots of each page: into docs/console/ with UPDATE_SCREENSHOTS=1 (to refresh the ones the
// READMEs show), else into the temporary folder, so a test run leaves the checkout as it was.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../shared/project-root.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.join(PROJECT_ROOT, 'docs', 'console') : path.join(os.tmpdir(), 'console-screenshots');

export function chromiumPresent(): boolean {
  return fs.existsSync(CHROMIUM);
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
  });
}

export interface ConsoleSession {
  context: BrowserContext;
  page: Page;
  /** Every CSP violation any page of this context reported, as "directive blocked-uri (page)". */
  violations: string[];
  /** Uncaught errors of the pages' scripts. */
  errors: string[];
  close(): Promise<void>;
}

/** A fresh browser context (its own cookies) whose pages report CSP violations and script errors. */
export async function consoleSession(browser: Browser, opts: { colorScheme?: 'light' | 'dark' } = {}): Promise<ConsoleSession> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, colorScheme: opts.colorScheme ?? 'light' });
  const violations: string[] = [];
  const errors: string[] = [];
  await context.exposeFunction('__reportCspViolation', (v: string) => violations.push(v));
  await context.addInitScript(() => {
    // In the page (the project compiles without the DOM library).
    const g = globalThis as any;
    g.document.addEventListener('securitypolicyviolation', (e: any) => {
      g.__reportCspViolation(`${e.violatedDirective} ${e.blockedURI} (${g.location.pathname})`);
    });
  });
  const page = await context.newPage();
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(m.text());
  });
  return { context, page, violations, errors, close: () => context.close() };
}

/** What a console suite's tests use: its browser, and the first session of it with its page. */
export interface ConsoleSuite {
  browser: Browser;
  session: ConsoleSession;
  page: Page;
}

/**
 * Sets up the calling `describe` as a console browser suite: skipped where Chromium is absent,
 * else one browser and one session (signed out) opened before the suite's own hooks, which are
 * to be registered after this call (they start the stack and may sign `page` in); a failed
 * test's page kept as a screenshot; session and browser closed after the tests. The fields are
 * set once the first `before` has run.
 */
export function useConsole(): ConsoleSuite {
  const suite = {} as ConsoleSuite;
  before(async function () {
    if (!chromiumPresent()) {
      console.warn('      skipped: /usr/bin/chromium is absent (apt-get install chromium; .ci/run installs it)');
      this.skip();
    }
    suite.browser = await launchChromium();
    suite.session = await consoleSession(suite.browser);
    suite.page = suite.session.page;
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed' && suite.page) return failureScreenshot(suite.page, this.currentTest.title).catch(() => {});
  });
  after(async () => {
    await suite.session?.close();
    await suite.browser?.close();
  });
  return suite;
}

/** Signs in through the console's form; ends on the page `next` names (default: the home). */
export async function signInThroughForm(page: Page, baseUrl: string, email: string, password: string, next?: string): Promise<void> {
  await page.goto(`${baseUrl}/console/sign-in${next ? `?next=${encodeURIComponent(next)}` : ''}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await Promise.all([page.waitForURL((u) => !u.pathname.endsWith('/sign-in')), page.getByRole('button', { name: 'Sign in' }).click()]);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** The page as a failed test left it, for whoever reads the failure: in the temporary folder, never among the docs. */
export async function failureScreenshot(page: Page, testTitle: string): Promise<void> {
  const dir = path.join(os.tmpdir(), 'console-test-failures');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${testTitle.slice(0, 60).replace(/\W+/g, '-')}.png`);
  await page.screenshot({ path: file, fullPage: true });
  console.log(`[console test] the failed page: ${file}`);
}

/** Marks the page's document, to tell later (`sameDocument`) that what changed came without a reload. */
export async function markDocument(page: Page): Promise<void> {
  await page.evaluate(() => {
    (globalThis as any).__sameDocument = true;
  });
}

export async function sameDocument(page: Page): Promise<boolean> {
  return page.evaluate(() => (globalThis as any).__sameDocument === true);
}

/** Opens each URL and returns the ones that are not the console's 404 page (or that show `secret`). */
export async function notNotFound(page: Page, urls: string[], secret?: string): Promise<string[]> {
  const wrong: string[] = [];
  for (const url of urls) {
    const res = await page.goto(url);
    const ok = res?.status() === 404 && (await page.textContent('h1')) === 'Not found' && !(secret && (await page.content()).includes(secret));
    if (!ok) wrong.push(`${url} -> ${res?.status()}`);
  }
  return wrong;
}
