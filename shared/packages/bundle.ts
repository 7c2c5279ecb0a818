// Importing several packages from one archive, all or none (SPEC 4.6 `import-bundle`).
// Layout (./README.md): one top-level folder per package, each holding what a single
// `POST /api/packages/import` archive holds at its root (manifest.json, prompt.md or SKILL.md).
// Files at the root of the bundle (a README, a LICENSE) are ignored.
import type { Knex } from 'knex';
import semver from 'semver';
import { ProblemError, type ProblemFieldError, problem } from '../errors.ts';
import { type ImportRequest, type ImportResult, importPackage, manifestOf } from './import.ts';
import type { FileMap, PackageType } from './types.ts';

export interface BundledPackage {
  /** Top-level folder of the bundle holding the package. */
  folder: string;
  files: FileMap;
  manifest: Record<string, any> & { type: PackageType };
}

/** The dependency kinds of a manifest and the package type each names (SPEC 2.12). */
const DEPENDENCY_TYPES: Record<string, PackageType> = { skills: 'skill', mcp_servers: 'mcp-server', integrations: 'integration' };

/** The same problem, its detail and fields prefixed with the package it is about. */
export function inPackage(err: unknown, folder: string, packageId?: string): unknown {
  if (!(err instanceof ProblemError)) return err;
  const label = `Package "${folder}/"${packageId ? ` (${packageId})` : ''}`;
  const errors: ProblemFieldError[] = (err.errors ?? [{ field: 'manifest', code: err.code, message: err.detail }]).map((e) => ({
    ...e,
    field: `${folder}/${e.field}`,
    ...(packageId ? { packageId } : {}),
  }));
  return problem(err.code, { detail: `${label}: ${err.detail}`, errors, param: err.param, headers: err.headers });
}

/** The packages of a bundle by folder, each validated as `import` validates an archive. */
export function splitBundle(files: FileMap): BundledPackage[] {
  const folders = new Map<string, FileMap>();
  for (const [path, file] of Object.entries(files)) {
    const slash = path.indexOf('/');
    if (slash === -1) continue;
    const folder = path.slice(0, slash);
    const pkg = folders.get(folder) ?? {};
    folders.set(folder, pkg);
    pkg[path.slice(slash + 1)] = file;
  }
  if (folders.size === 0) {
    throw problem('invalid_archive', "The bundle holds no package: put each package in its own top-level folder, with its manifest.json at the folder's root");
  }
  const out: BundledPackage[] = [];
  const byName = new Map<string, string>();
  for (const folder of [...folders.keys()].sort()) {
    const pkgFiles = folders.get(folder)!;
    let manifest: BundledPackage['manifest'];
    try {
      manifest = manifestOf(pkgFiles);
    } catch (err) {
      throw inPackage(err, folder);
    }
    const twin = byName.get(manifest.name);
    if (twin) {
      const message = `${manifest.name} appears twice in the bundle, in "${twin}/" and "${folder}/"`;
      throw problem('validation_failed', {
        detail: message,
        errors: [{ field: `${folder}/manifest.name`, code: 'duplicate', message, packageId: manifest.name }],
      });
    }
    byName.set(manifest.name, folder);
    out.push({ folder, files: pkgFiles, manifest });
  }
  return out;
}

function refuse(pkg: BundledPackage, field: string, code: string, message: string): never {
  throw problem('validation_failed', {
    detail: `Package "${pkg.folder}/" (${pkg.manifest.name}): ${message}`,
    errors: [{ field: `${pkg.folder}/${field}`, code, message, packageId: pkg.manifest.name }],
  });
}

/**
 * The packages in import order: a package after every bundled package it depends on (a skill
 * before the agent that uses it), otherwise by folder name. A dependency on a bundled package
 * must name it with its type's kind and accept the bundled version; a cycle is refused.
 */
export function importOrder(pkgs: BundledPackage[]): BundledPackage[] {
  const byName = new Map(pkgs.map((p) => [p.manifest.name as string, p]));
  const needs = new Map<BundledPackage, Set<BundledPackage>>();
  for (const pkg of pkgs) {
    const deps = new Set<BundledPackage>();
    for (const [kind, entries] of Object.entries((pkg.manifest.dependencies ?? {}) as Record<string, Record<string, string>>)) {
      for (const [id, range] of Object.entries(entries ?? {})) {
        const dep = byName.get(id);
        if (!dep) continue;
        const field = `manifest.dependencies.${kind}.${id}`;
        if (DEPENDENCY_TYPES[kind] !== dep.manifest.type) {
          refuse(pkg, field, 'invalid_value', `${field} names ${id}, which the bundle holds as a ${dep.manifest.type}`);
        }
        if (range !== 'latest' && !semver.satisfies(dep.manifest.version, range, { includePrerelease: true })) {
          refuse(pkg, field, 'invalid_value', `${field} asks for ${range}, but the bundle holds ${id}@${dep.manifest.version}`);
        }
        if (dep !== pkg) deps.add(dep);
      }
    }
    needs.set(pkg, deps);
  }
  const ordered: BundledPackage[] = [];
  const done = new Set<BundledPackage>();
  while (ordered.length < pkgs.length) {
    const ready = pkgs.filter((p) => !done.has(p) && [...needs.get(p)!].every((d) => done.has(d)));
    if (ready.length === 0) {
      const stuck = pkgs.filter((p) => !done.has(p));
      refuse(
        stuck[0],
        'manifest.dependencies',
        'dependency_cycle',
        `the bundle's dependencies form a cycle among ${stuck.map((p) => p.manifest.name).join(', ')}`,
      );
    }
    for (const p of ready) {
      ordered.push(p);
      done.add(p);
    }
  }
  return ordered;
}

/**
 * Imports every package of the bundle in one transaction, in `importOrder`: the first refusal
 * (a version already published, a name taken, no write permission in a home space) rolls back
 * all of them and is answered naming that package.
 */
export async function importBundle(knex: Knex, pkgs: BundledPackage[], req: Omit<ImportRequest, 'files'>): Promise<ImportResult[]> {
  return knex.transaction(async (trx) => {
    const results: ImportResult[] = [];
    for (const pkg of pkgs) {
      try {
        // A nested transaction (a savepoint): importPackage keeps its own error handling.
        results.push(await importPackage(trx, { ...req, files: pkg.files }));
      } catch (err) {
        throw inPackage(err, pkg.folder, pkg.manifest.name);
      }
    }
    return results;
  });
}
