import type { RouteDef } from '../../route.ts';
import { proxyRoutes } from './_proxy.ts';
import createSession from './sessions.ts';

export const credentialProxyRoutes: RouteDef[] = [createSession, ...proxyRoutes()];
