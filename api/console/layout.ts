// The frame of every console page: landmarks (banner, navigation, main), the organization and
// space the page is in, the space navigation, the flash message, one stylesheet and one module
// (console.js, which starts the page's live parts from `data-controller` attributes). No inline
// script or style anywhere: CSP `default-src 'self'` (README.md).
import { setPageHeaders } from '../html/page.ts';
import { assetUrl } from './assets.ts';
import { takeFlash } from './flash.ts';
import { csrfField } from './forms.ts';
import { type Html, html, when } from './html.ts';
import type { PageContext } from './page.ts';

/** Everything from this origin, nothing inline, no frames, forms only back here. */
export const CONSOLE_CSP = ["default-src 'self'", "base-uri 'none'", "object-src 'none'", "frame-ancestors 'none'", "form-action 'self'"].join('; ');

export interface Crumb {
  label: string;
  href?: string;
}

export interface LayoutOptions {
  title: string;
  body: Html;
  status?: number;
  /** Above the heading: where the page sits (`Runs` > `run_…`). */
  crumbs?: Crumb[];
  /** The navigation entry to mark current (its `path`). */
  current?: string;
  /** Without a heading of its own (the body has one). */
  heading?: Html | string | false;
}

function topbar(page: PageContext<unknown>): Html {
  const where = page.space
    ? html`<nav class="context" aria-label="Organization and space"><span class="org">${page.space.org.name}</span>\
<span class="sep" aria-hidden="true">/</span><span class="space">${page.space.space.name}</span> <a href="/console" \
class="switch">Switch</a></nav>`
    : '';
  const who = page.user
    ? html`<div class="who"><span class="user" title="${page.user.email}">${page.user.name || page.user.email}</span>\
<form method="post" action="/console/sign-out" class="inline-form">${csrfField(page)}<button type="submit" \
class="link">Sign out</button></form></div>`
    : '';
  return html`<header class="topbar"><a class="brand" href="/console">Agent console</a>${where}${who}</header>`;
}

function sidenav(page: PageContext<unknown>, current: string | undefined): Html {
  if (!page.space || !page.nav.length) return html``;
  const items = page.nav.map((n) => html`<li><a href="${page.space!.base}/${n.path}"${when(n.path === current, ' aria-current="page"')}>${n.label}</a></li>`);
  return html`<nav class="sidenav" aria-label="Console"><ul>${items}</ul></nav>`;
}

function crumbs(list: Crumb[] | undefined): Html {
  if (!list?.length) return html``;
  const items = list.map((c, i) =>
    c.href && i < list.length - 1 ? html`<li><a href="${c.href}">${c.label}</a></li>` : html`<li><span aria-current="page">${c.label}</span></li>`,
  );
  return html`<nav class="crumbs" aria-label="Breadcrumb"><ol>${items}</ol></nav>`;
}

/** Writes the page: status, the security headers, the frame around `body`. */
export function sendConsolePage(page: PageContext<unknown>, o: LayoutOptions): void {
  const { ctx } = page;
  const flash = takeFlash(ctx);
  const heading = o.heading === undefined ? html`<h1>${o.title}</h1>` : o.heading === false ? '' : html`${o.heading}`;
  const notice = flash ? html`<div class="flash flash-${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}">${flash.text}</div>` : '';
  setPageHeaders(ctx, o.status ?? 200, CONSOLE_CSP);
  ctx.body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><meta name="color-scheme" content="light dark">
<title>${o.title} · Agent console</title>
<link rel="stylesheet" href="${assetUrl('console.css')}">
<script type="module" src="${assetUrl('console.js')}"></script>
</head>
<body${when(page.space, html` data-org-id="${page.space?.org.id ?? ''}" data-space-id="${page.space?.space.id ?? ''}"`)}>
<a class="skip" href="#main">Skip to content</a>
${topbar(page)}
<div class="frame${page.space ? ' with-nav' : ''}">
${sidenav(page, o.current)}
<main id="main" tabindex="-1">
${crumbs(o.crumbs)}${notice}${heading}
${o.body}
</main>
</div>
</body></html>`.value;
}
