// The chat module (README.md beside this file): chat sessions with an agent.
import type { ModuleDeclaration } from '../modules.ts';

export default {
  name: 'chat',
  scopes: [],
  workflows: ['chatSession'],
} satisfies ModuleDeclaration;
