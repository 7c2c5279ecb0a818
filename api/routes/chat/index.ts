// The chat module's routes (DESIGN.md 7; shared/chat/README.md). Left out of MODULES, /api/chat is 404.
import { moduleRoutes, type RouteDef } from '../../route.ts';
import create from './create.ts';
import list from './list.ts';
import messages from './messages.ts';
import send from './send.ts';

export const chatRoutes: RouteDef[] = moduleRoutes('chat', [create, list, send, messages]);
