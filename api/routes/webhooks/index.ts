// The webhooks module's routes (SPEC 4.9; shared/webhooks/README.md). Left out of MODULES, /api/webhooks is 404.
import { moduleRoutes, type RouteDef } from '../../route.ts';
import create from './create.ts';
import remove from './delete.ts';
import deliveries from './deliveries.ts';
import get from './get.ts';
import list from './list.ts';
import replay from './replay.ts';
import retryDelivery from './retry-delivery.ts';
import rotate from './rotate.ts';
import test from './test.ts';
import update from './update.ts';

export const webhookRoutes: RouteDef[] = moduleRoutes('webhooks', [create, list, get, update, remove, deliveries, test, rotate, retryDelivery, replay]);
