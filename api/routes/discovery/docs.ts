// Interactive reference served from the swagger-ui-dist package's files: no CDN.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { problem } from '../../../shared/errors.ts';
import { defineRoute } from '../../route.ts';

const require = createRequire(import.meta.url);
const DIST = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css',
  'swagger-ui-bundle.js': 'application/javascript',
  'swagger-ui-standalone-preset.js': 'application/javascript',
  'favicon-32x32.png': 'image/png',
};
const INIT_JS =
  `window.onload = () => { window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#ui', deepLinking: true, presets: ` +
  `[SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'BaseLayout' }); };`;
const HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Agent Execution Service API</title>
<link rel="icon" href="/api/docs/assets/favicon-32x32.png"><link rel="stylesheet" href="/api/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/api/docs/assets/init.js"></script></body></html>`;

export const docsPage = defineRoute({
  method: 'get',
  path: '/api/docs',
  operationId: 'getDocs',
  summary: 'Interactive API reference',
  tag: 'Discovery',
  auth: 'none',
  responses: { 200: { description: 'HTML page', contentType: 'text/html', schema: { type: 'string' } } },
  handler(ctx) {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = HTML;
  },
});

export const docsAsset = defineRoute<unknown, unknown, { file: string }>({
  method: 'get',
  path: '/api/docs/assets/:file',
  operationId: 'getDocsAsset',
  summary: 'Static file of the interactive reference',
  tag: 'Discovery',
  auth: 'none',
  params: { type: 'object', required: ['file'], properties: { file: { type: 'string' } } },
  responses: { 200: { description: 'File' } },
  handler(ctx, { params }) {
    ctx.set('Cache-Control', 'public, max-age=3600');
    if (params.file === 'init.js') {
      ctx.type = 'application/javascript';
      ctx.body = INIT_JS;
      return;
    }
    const type = ASSETS[params.file];
    if (!type) throw problem('not_found', 'No such asset');
    ctx.type = type;
    ctx.body = fs.createReadStream(path.join(DIST, params.file));
  },
});
