/** The manifest kinds, their accepted spellings and their kind-root directories. */

export const API_VERSION = 'proxops/v1alpha1'

export const KINDS = [
  'VM',
  'TemplateVM',
  'LXC',
  'TemplateCT',
  'ISO',
  'CTTemplate',
  'DiskImage',
  'BackupJob',
  'Pool',
] as const
export type Kind = (typeof KINDS)[number]

/** Guest kinds: identity `(node, vmid)`, sharing PVE's per-node id pool. */
export const GUEST_KINDS = ['VM', 'TemplateVM', 'LXC', 'TemplateCT'] as const
export type GuestKind = (typeof GUEST_KINDS)[number]

/** Accepted spellings, matched case-insensitively. */
export const KIND_ALIASES: Readonly<Record<Kind, readonly string[]>> = {
  VM: ['VM'],
  TemplateVM: ['TemplateVM', 'TVM', 'TEMPLATE'],
  LXC: ['LXC'],
  TemplateCT: ['TemplateCT', 'TCT'],
  ISO: ['ISO'],
  CTTemplate: ['CTTemplate', 'CTT'],
  DiskImage: ['DiskImage', 'DISK'],
  BackupJob: ['BackupJob'],
  Pool: ['Pool'],
}

const BY_LOWER = new Map<string, Kind>()
for (const kind of KINDS) for (const alias of KIND_ALIASES[kind]) BY_LOWER.set(alias.toLowerCase(), kind)

/** The canonical kind for any accepted spelling (case-insensitive), else undefined. */
export function canonicalKind(spelling: string): Kind | undefined {
  return BY_LOWER.get(spelling.trim().toLowerCase())
}

export function isGuestKind(kind: Kind): kind is GuestKind {
  return (GUEST_KINDS as readonly string[]).includes(kind)
}

/** Kind-root directories: exactly these names. */
export const KIND_ROOTS = [
  'vm',
  'lxc',
  'iso',
  'ctt',
  'templatevm',
  'diskimage',
  'templatect',
  'backupjob',
  'pool',
] as const
export const KIND_ROOT_OF: Readonly<Record<Kind, string>> = {
  VM: 'vm',
  TemplateVM: 'templatevm',
  LXC: 'lxc',
  TemplateCT: 'templatect',
  ISO: 'iso',
  CTTemplate: 'ctt',
  DiskImage: 'diskimage',
  BackupJob: 'backupjob',
  Pool: 'pool',
}

/**
 * A JSON-Schema/ECMAScript pattern matching any accepted spelling of the given kinds, ignoring case
 * (`VM` -> `[Vv][Mm]`), for editors whose regex engines have no `i` flag.
 */
export function kindPattern(kinds: readonly Kind[]): string {
  const spellings = kinds.flatMap((k) => KIND_ALIASES[k])
  const parts = spellings.map((s) =>
    [...s].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join(''),
  )
  return `^(?:${parts.join('|')})$`
}
