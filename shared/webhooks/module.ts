// The webhooks module (README.md beside this file).
// Checked as a ModuleDeclaration where shared/modules.ts lists it (an import of that type here
// would tie the two files in a cycle).

export default {
  name: 'webhooks',
  scopes: ['webhooks:read', 'webhooks:write', 'webhooks:delete', 'org-webhooks:read', 'org-webhooks:write', 'org-webhooks:delete'],
  workflows: ['deliverWebhook', 'webhookOutbox'],
} as const;
