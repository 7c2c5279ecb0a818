// The webhooks module (README.md beside this file).
import type { ModuleDeclaration } from '../modules.ts';

export default {
  name: 'webhooks',
  scopes: ['webhooks:read', 'webhooks:write', 'webhooks:delete', 'org-webhooks:read', 'org-webhooks:write', 'org-webhooks:delete'],
  workflows: ['deliverWebhook', 'webhookOutbox'],
} satisfies ModuleDeclaration;
