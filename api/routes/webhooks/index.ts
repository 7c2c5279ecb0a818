// The webhooks module (SPEC 4.9). Removing it from the route table makes /api/webhooks 404.
import type { RouteDef } from '../../route.ts';
import create from './create.ts';
import remove from './delete.ts';
import deliveries from './deliveries.ts';
import get from './get.ts';
import list from './list.ts';
import rotate from './rotate.ts';
import test from './test.ts';
import update from './update.ts';

export const webhookRoutes: RouteDef[] = [create, list, get, update, remove, deliveries, test, rotate];
