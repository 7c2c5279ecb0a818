import type { RouteDef } from '../../route.ts';
import content from './content.ts';
import create from './create.ts';
import get from './get.ts';

export const uploadRoutes: RouteDef[] = [create, content, get];
