// The chat module (README.md beside this file): chat sessions with an agent.
// Checked as a ModuleDeclaration where shared/modules.ts lists it (an import of that type here
// would tie the two files in a cycle).

export default {
  name: 'chat',
  scopes: [],
  workflows: ['chatSession'],
} as const;
