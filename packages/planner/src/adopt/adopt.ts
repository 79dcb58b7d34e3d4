/**
 * adopt(): a LiveInventory to manifests. Pure: no PVE, no files, no clock. The CLI writes the
 * documents as YAML, prints the gaps and lists, and merges `newSshKeys` into the SOPS file.
 *
 * Every live config key is either mapped to a manifest field, ignored as PVE bookkeeping, or reported as a
 * gap (with sensitive values redacted), so nothing on PVE is silently dropped.
 */
import { parseManifest, type Kind } from '@proxops/schema'
import type { LiveInventory } from '../inventory.js'
import { ADOPTERS } from '../kinds/index.js'
import { sanitiseName } from '../kit/names.js'
import type {
  AdoptContext,
  AdoptedFile,
  AdoptGap,
  AdoptOptions,
  AdoptResult,
  AdoptSkip,
  Collect,
} from '../kit/adopt.js'

export { sanitiseName }

export function adopt(live: LiveInventory, options: AdoptOptions): AdoptResult {
  const tag = (options.ownershipTag ?? 'proxops').toLowerCase()
  const collect: Collect = { gaps: [], warnings: [] }
  const files: AdoptedFile[] = []
  const skipped: AdoptSkip[] = []
  const census = { cipassword: 0, unmatchedSshKeys: 0 }
  const newSshKeys = new Map<string, string>()
  const taken = new Map<Kind, Set<string>>()
  const claim = (kind: Kind, base: string, id: string | number): string => {
    const names = taken.get(kind) ?? new Set<string>()
    taken.set(kind, names)
    let name = base
    if (names.has(name)) name = `${base.slice(0, 62 - String(id).length)}-${id}`.replace(/[^a-z0-9-]/g, '-')
    for (let n = 2; names.has(name); n++) name = `${base.slice(0, 60)}-${n}`
    names.add(name)
    return name
  }

  // every kind adopts in its adopt order (Kind.adopt): artifacts first (a VM's CD names its ISO), then the guests,
  // what lives on them, and the cluster-wide kinds
  const ctx: AdoptContext = {
    options,
    tag,
    claim,
    collect,
    files,
    guestFiles: new Map(),
    skipped,
    isoNames: new Map(),
    census,
    newSshKeys,
  }
  for (const kind of ADOPTERS) kind.adopt.run(live, ctx)

  for (const file of files) {
    const parsed = parseManifest(file.document)
    if (!parsed.ok) {
      for (const issue of parsed.issues) {
        const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''
        const reason = `${where}${issue.message}`
        if (!file.incomplete.some((r) => r.startsWith(where) && where !== '')) file.incomplete.push(reason)
      }
    }
    file.incomplete = [...new Set(file.incomplete)].sort()
  }

  files.sort((a, b) => cmp(a.path, b.path))
  const incomplete = files.flatMap((f) => f.incomplete.map((reason) => ({ path: f.path, reason })))
  const resourcesLines = files.filter((f) => f.incomplete.length === 0).map((f) => `- ../../${f.path}`)
  return {
    cluster: options.cluster,
    files,
    gaps: sortGaps(collect.gaps),
    incomplete,
    skipped: skipped.sort((a, b) => cmp(a.kind, b.kind) || Number(a.id) - Number(b.id) || cmp(a.node, b.node)),
    warnings: [...new Set(collect.warnings)].sort(),
    resourcesLines,
    census,
    newSshKeys: [...newSshKeys].map(([name, value]) => ({ name, value })).sort((a, b) => cmp(a.name, b.name)),
    summary: {
      nodes: live.nodes.map((n) => n.node),
      guests: live.guests.length,
      isos: files.filter((f) => f.kind === 'ISO').length,
      ctTemplates: files.filter((f) => f.kind === 'CTTemplate').length,
      backupJobs: files.filter((f) => f.kind === 'BackupJob').length,
    },
  }
}

function sortGaps(gaps: AdoptGap[]): AdoptGap[] {
  const seen = new Set<string>()
  return gaps
    .filter((g) => {
      const key = JSON.stringify([g.kind, g.id, g.node, g.field, g.value])
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
    .sort(
      (a, b) =>
        cmp(a.kind, b.kind) ||
        cmpId(a.id, b.id) ||
        cmp(a.node, b.node) ||
        cmp(a.field, b.field) ||
        cmp(a.value, b.value),
    )
}

function cmpId(a: string, b: string): number {
  const na = Number(a)
  const nb = Number(b)
  if (Number.isInteger(na) && Number.isInteger(nb)) return na - nb
  return cmp(a, b)
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
