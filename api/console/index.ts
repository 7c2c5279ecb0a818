// The console's page table (README.md): each page is one file in pages/, listed here; its
// navigation entry, if any, is declared on the page itself. api/app.ts mounts the middleware.
import type Koa from 'koa';
import bulkJob from './pages/bulk-job.ts';
import { bulkCancel, bulkReplay } from './pages/bulk-runs.ts';
import home from './pages/home.ts';
import run from './pages/run.ts';
import runCancel from './pages/run-cancel.ts';
import runReplay from './pages/run-replay.ts';
import runs from './pages/runs.ts';
import { signInPage, signInSubmit } from './pages/sign-in.ts';
import signOut from './pages/sign-out.ts';
import space from './pages/space.ts';
import type { PageDef } from './page.ts';
import { consoleMiddleware } from './router.ts';

export const consolePages: PageDef[] = [signInPage, signInSubmit, signOut, home, space, runs, bulkCancel, bulkReplay, bulkJob, run, runCancel, runReplay];

export function consoleApp(): Koa.Middleware {
  return consoleMiddleware(consolePages);
}
