import Koa from 'koa';
import type { Config } from '../shared/config.ts';
import { AccessCache } from './access-cache.ts';
import { consoleApp } from './console/index.ts';
import { Discovery } from './discovery.ts';
import { corsFor } from './middleware/cors.ts';
import { metricsEndpoint, observe } from './middleware/observe.ts';
import { problems } from './middleware/problems.ts';
import { requestId } from './middleware/request-id.ts';
import type { AppContext } from './context.ts';
import type { RouteDef } from './route.ts';
import { allowedMethods, buildRouter } from './router.ts';
import { discoveryRoutes, resourceRoutes } from './routes/index.ts';
import type { Services } from './services.ts';

export function allRoutes(config: Config): RouteDef[] {
  // The discovery routes describe themselves too: they read the document built from the
  // whole table, including them.
  let docs: Discovery | undefined;
  // An optional module left out of MODULES has no routes: 404, and absent from OpenAPI and llms.txt.
  const enabled = (r: RouteDef) => !r.module || config.modules.has(r.module);
  const routes = [...resourceRoutes.filter(enabled), ...discoveryRoutes(() => docs!)];
  docs = new Discovery(routes, config);
  return routes;
}

/** `extraRoutes` mount after the product's routes (tests use it to provoke failures). */
export function createApp(resources: Omit<Services, 'accessCache'>, extraRoutes: RouteDef[] = []): Koa {
  const services: Services = { ...resources, accessCache: new AccessCache() };
  const app = new Koa();
  app.proxy = services.config.trustProxy > 0;
  app.context.services = services;
  app.silent = true; // errors are logged by the problems middleware, once
  const routes = buildRouter([...allRoutes(services.config), ...extraRoutes]);
  app.use(requestId as unknown as Koa.Middleware);
  app.use(observe as unknown as Koa.Middleware); // spans and request metrics, with the final status
  app.use(async (ctx, next) => {
    if (!services.log.isLevelEnabled('debug')) return next();
    const t0 = performance.now();
    await next();
    const c = ctx as unknown as AppContext;
    services.log.debug(
      { requestId: c.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - t0) },
      'request',
    );
  });
  app.use(problems as unknown as Koa.Middleware);
  app.use(corsFor(services.config.trustedOrigins));
  app.use(metricsEndpoint as unknown as Koa.Middleware); // GET /metrics, outside the route table (not in OpenAPI)
  app.use(consoleApp()); // /console: HTML pages for people, outside the route table (api/console/README.md)
  app.use(routes);
  app.use(allowedMethods());
  return app;
}
