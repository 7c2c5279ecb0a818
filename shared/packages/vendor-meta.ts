// Vendor metadata under a manifest's (or an auth's) `_meta` (SPEC 2.12). The SPEC names it
// `dev.service/<name>`; packages in the field, written for the package format's own runtime,
// key the same metadata `dev.appstrate/<name>` (`api`, `oauth`, `auth`). Both are read, the
// SPEC's first, so a package works whichever it ships.
export const VENDOR_META_NAMESPACES = ['dev.service', 'dev.appstrate'] as const;

export type VendorMetaName = 'api' | 'oauth' | 'auth';

/** The keys `_meta` may hold `name` under, the SPEC's first. */
export function vendorMetaKeys(name: VendorMetaName): string[] {
  return VENDOR_META_NAMESPACES.map((ns) => `${ns}/${name}`);
}

/** `_meta["dev.service/<name>"]`, else `_meta["dev.appstrate/<name>"]`; undefined when neither is there. */
export function vendorMeta(meta: unknown, name: VendorMetaName): unknown {
  if (typeof meta !== 'object' || meta === null) return undefined;
  for (const key of vendorMetaKeys(name)) {
    const value = (meta as Record<string, unknown>)[key];
    if (value !== undefined) return value;
  }
  return undefined;
}
