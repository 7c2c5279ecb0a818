// Optional modules (SPEC 1, DESIGN.md 7): webhooks, oidc, mcp, chat. Each declares in
// `shared/<module>/module.ts`, beside its README, the scopes and workflows it alone owns; its
// routes carry its name (`moduleRoutes`, api/route.ts). `MODULES` lists the modules that run:
// a module left out answers 404 on its routes, leaves OpenAPI and llms.txt, its scopes are held
// and granted by nobody, and no worker registers its workflows or activities.
import chat from './chat/module.ts';
import mcp from './mcp/module.ts';
import oidc from './oidc/module.ts';
import type { Scope } from './permissions.ts';
import webhooks from './webhooks/module.ts';

export const OPTIONAL_MODULES = ['webhooks', 'oidc', 'mcp', 'chat'] as const;
export type ModuleName = (typeof OPTIONAL_MODULES)[number];

export interface ModuleDeclaration {
  name: ModuleName;
  /** Scopes only this module checks. */
  scopes: readonly Scope[];
  /** Workflow types only this module runs: `workflows/<module>/index.ts` exports them. */
  workflows: readonly string[];
}

export const MODULES: Readonly<Record<ModuleName, ModuleDeclaration>> = { webhooks, oidc, mcp, chat };

/** The scopes of the modules `enabled` leaves out. */
export function scopesOfDisabledModules(enabled: ReadonlySet<ModuleName>): ReadonlySet<Scope> {
  return new Set(OPTIONAL_MODULES.filter((m) => !enabled.has(m)).flatMap((m) => MODULES[m].scopes));
}

/** `held` without the scopes of modules that are off. */
export function withoutDisabledScopes(held: ReadonlySet<Scope>, enabled: ReadonlySet<ModuleName>): ReadonlySet<Scope> {
  const off = scopesOfDisabledModules(enabled);
  if (!off.size) return held;
  return new Set([...held].filter((s) => !off.has(s)));
}
