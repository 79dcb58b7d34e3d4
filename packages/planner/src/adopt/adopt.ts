/**
 * adopt(): a LiveInventory to manifests. Pure: no PVE, no files, no clock. The CLI writes the
 * documents as YAML, prints the gaps and lists, and merges `newSshKeys` into the SOPS file.
 *
 * Every live config key is either mapped to a manifest field, ignored as PVE bookkeeping, or reported as a
 * gap (with sensitive values redacted), so nothing on PVE is silently dropped.
 */
import { parseManifest, type Kind } from '@proxops/schema'
import type { LiveInventory } from '../inventory.js'
import { sanitiseName } from './names.js'
import { adoptArtifacts } from '../kinds/artifact/adopt.js'
import { adoptLxc, adoptVm } from '../kinds/guest/adopt.js'

export { sanitiseName }
import type { AdoptedFile, AdoptGap, AdoptOptions, AdoptResult, AdoptSkip, Collect } from './types.js'
import { adoptedFirewall } from '../kinds/firewall/adopt.js'
import { adoptedHa } from '../kinds/ha/adopt.js'
import { adoptBackupJob } from '../kinds/backup-job/adopt.js'
import { adoptPools, poolMemberships } from '../kinds/pool/adopt.js'

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

  // artifacts first: VMs refer to adopted ISOs by name
  const isoNames = new Map<string, string>()
  const artifactFiles = adoptArtifacts(live, options.cluster, claim, collect, isoNames)
  files.push(...artifactFiles)

  const memberships = poolMemberships(live)
  if (memberships.warning) collect.warnings.push(memberships.warning)
  // the pools (selectForAdoption keeps them only without a guest filter); guests name theirs in spec.pool
  files.push(...adoptPools(live, options.cluster, options.poolManifests, claim, sanitiseName, tag))

  for (const guest of live.unknownGuests) {
    skipped.push({
      kind: guest.type === 'qemu' ? 'VM' : 'LXC',
      node: guest.node,
      id: String(guest.vmid),
      ...(guest.name !== undefined ? { name: guest.name } : {}),
      reason: `not readable this run (${guest.unreadable})`,
    })
  }

  for (const guest of live.guests) {
    if (guest.lock)
      collect.warnings.push(
        `${guest.type} ${guest.vmid} on ${guest.node} is locked (${guest.lock}); adopted from its current config`,
      )
    if (Object.keys(guest.pending).length > 0 || guest.pendingDeletes.length > 0) {
      collect.warnings.push(
        `${guest.type} ${guest.vmid} on ${guest.node} has pending changes; the applied values were adopted`,
      )
    }
    const file =
      guest.type === 'qemu'
        ? adoptVm(guest, { ...options, tag }, claim, collect, isoNames, census, newSshKeys)
        : adoptLxc(guest, { ...options, tag }, claim, collect)
    const firewall = adoptedFirewall(live.firewalls.find((f) => f.vmid === guest.vmid))
    if (firewall) (file.document.spec as Record<string, unknown>).firewall = firewall
    const ha = adoptedHa(guest, live.ha, tag)
    const spec = file.document.spec as Record<string, unknown>
    if (ha.ha) spec.ha = ha.ha
    if (ha.state) spec.state = ha.state
    if (ha.incomplete) file.incomplete.push(ha.incomplete)
    collect.warnings.push(...ha.warnings)
    for (const g of ha.gaps) collect.gaps.push({ kind: file.kind, node: guest.node, id: String(guest.vmid), ...g })
    const pool = memberships.of.get(guest.vmid)
    if (pool !== undefined) spec.pool = pool
    files.push(file)
  }

  if ('known' in live.backupJobs)
    for (const job of live.backupJobs.known)
      files.push(
        adoptBackupJob(
          job,
          options.cluster,
          tag,
          claim('BackupJob', sanitiseName(job.id, 'backup-job'), job.id),
          collect.gaps,
        ),
      )
  else collect.warnings.push(`backup jobs not adopted: ${live.backupJobs.unreadable}`)

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
