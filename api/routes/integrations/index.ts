// Integration routes (DESIGN.md 7; shared/integrations/README.md): list, hosted connect, OAuth
// client, read; mounted by api/routes/index.ts.
import type { RouteDef } from '../../route.ts';
import connectCallback from './connect-callback.ts';
import connectWithFields from './connect-fields.ts';
import createConnectSession from './connect-session.ts';
import startConnect from './connect-start.ts';
import submitConnect from './connect-submit.ts';
import get from './get.ts';
import list from './list.ts';
import putOAuthClient from './oauth-client.ts';

export const integrationRoutes: RouteDef[] = [
  list,
  connectWithFields,
  createConnectSession,
  startConnect,
  submitConnect,
  connectCallback,
  putOAuthClient,
  get, // last: `/api/integrations/:scope/:name` must not shadow fixed paths such as `/api/integrations/connect/start`
];
