// Discovery (SPEC 4.11): this OpenAPI document, its docs page, error pages, llms.txt, health;
// mounted by api/routes/index.ts. The OpenAPI and llms.txt routes describe the other routes, so
// they take the document lazily.
import type { Discovery } from '../../discovery.ts';
import type { RouteDef } from '../../route.ts';
import { docsAsset, docsPage } from './docs.ts';
import errorDocs from './error-docs.ts';
import health from './health.ts';
import llmsTxt from './llms-txt.ts';
import openapi from './openapi.ts';

export function discoveryRoutes(docs: () => Discovery): RouteDef[] {
  return [openapi(docs), docsPage, docsAsset, errorDocs, llmsTxt(docs), health];
}
