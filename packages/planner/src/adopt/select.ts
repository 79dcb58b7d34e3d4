/**
 * Which live objects `adopt` turns into manifests: by default only the unmanaged ones. A guest whose vmid the
 * repository already declares for the cluster, and an artifact volume whose volid it declares, are left out (a
 * second manifest for them would claim the same object twice), as is a backup job whose PVE id it declares. A
 * filter by vmid, name or tag narrows the guests; artifacts and backup jobs are adopted only when no filter is
 * given. A guest, pool or backup job whose ownership marker names another cluster entry is that entry's
 * (docs/safety.md): it is left out and reported, whatever the filter or `includeDeclared` say, since adopting it
 * here would make two entries claim one object. Pure.
 */
import type { DesiredState } from '../desired.js'
import { isArtifact, isBackupJob } from '../desired.js'
import { known, type LiveInventory } from '../inventory.js'
import { artifactVolid } from '../desired.js'
import { commentOwner, commentWord, ownerOf } from '../kit/ownership.js'
import type { Policy } from '../plan-types.js'

/** What a cluster's manifests already claim: guest vmids, the volids of its artifacts, backup job ids. */
export function declaredObjects(manifests: DesiredState['manifests']): {
  vmids: Set<number>
  volids: Set<string>
  jobs: Set<string>
  poolids: Set<string>
  storages: Set<string>
} {
  const vmids = new Set<number>()
  const volids = new Set<string>()
  const jobs = new Set<string>()
  const poolids = new Set<string>()
  const storages = new Set<string>()
  for (const m of manifests) {
    if (isArtifact(m)) volids.add(artifactVolid(m))
    else if (isBackupJob(m)) jobs.add(m.spec.id)
    else if (m.kind === 'Pool') poolids.add(m.spec.id)
    else if (m.kind === 'Storage') storages.add(m.spec.id)
    else {
      const vmid = (m.spec as { vmid?: unknown }).vmid
      if (typeof vmid === 'number') vmids.add(vmid)
    }
  }
  return { vmids, volids, jobs, poolids, storages }
}

export interface AdoptSelection {
  /** vmids the repository declares for the cluster */
  declaredVmids: ReadonlySet<number>
  /** artifact volume ids the repository declares (`local:iso/debian.iso`) */
  declaredVolids: ReadonlySet<string>
  /** backup job ids the repository declares; absent = none */
  declaredJobs?: ReadonlySet<string>
  /** pool ids the repository declares (Pool `spec.id`); absent = none */
  declaredPoolids?: ReadonlySet<string>
  /** storage ids the repository declares (Storage `spec.id`); absent = none */
  declaredStorages?: ReadonlySet<string>
  /** only the guests with one of these vmids, names or tags (any one matches); absent or empty = every guest */
  only?: AdoptFilter
  /** adopt the declared objects too (to refresh their manifests from PVE) */
  includeDeclared?: boolean
  /**
   * the cluster entry adopting (`clusterEntry`) and the ownership tag: objects marked for another entry are left
   * out; absent or without an entry = every object is a candidate
   */
  owner?: Pick<Policy, 'ownershipTag' | 'clusterEntry'>
}

/** An object left out because another cluster entry's marker is on it. */
export interface OwnedElsewhere {
  kind: 'guest' | 'pool' | 'backup-job'
  /** the vmid, pool id or job id */
  id: string
  /** the marker as PVE shows it: `proxops.<entry>` tags, or the comment's `managed-by=proxops.<entry>` */
  marker: string
}

export interface AdoptFilter {
  vmids?: readonly number[]
  names?: readonly string[]
  tags?: readonly string[]
}

export interface SelectedInventory {
  /** the inventory with only the objects to adopt */
  live: LiveInventory
  /** left out because the repository declares them: guests by vmid, artifacts by volid, jobs and pools by id (sorted) */
  declared: { guests: number[]; volids: string[]; jobs: string[]; poolids: string[] }
  /** guests the filter left out */
  filteredOut: number
  /** objects another cluster entry owns, never adopted here (guests by vmid, then pools, then jobs, by id) */
  ownedElsewhere: OwnedElsewhere[]
  /** the pools to write Pool manifests for (pass to adopt's `poolManifests`) */
  poolManifests: string[]
}

/** Whether a filter is given at all. */
function isFiltering(f: AdoptFilter | undefined): f is AdoptFilter {
  return Boolean(f && ((f.vmids?.length ?? 0) > 0 || (f.names?.length ?? 0) > 0 || (f.tags?.length ?? 0) > 0))
}

/** Whether one guest matches the filter: its vmid, its name, or one of its tags (tags compare lower-cased, as PVE stores them). */
export function matchesFilter(
  guest: { vmid: number; name?: string; tags: readonly string[] },
  f: AdoptFilter,
): boolean {
  return (
    (f.vmids ?? []).includes(guest.vmid) ||
    (guest.name !== undefined && (f.names ?? []).includes(guest.name)) ||
    (f.tags ?? []).some((t) => guest.tags.includes(t.toLowerCase()))
  )
}

export function selectForAdoption(live: LiveInventory, selection: AdoptSelection): SelectedInventory {
  const only = selection.only
  const filtering = isFiltering(only)
  const wanted = (g: { vmid: number; name?: string; tags: readonly string[] }): boolean =>
    !filtering || matchesFilter(g, only)
  const owner = selection.owner?.clusterEntry !== undefined ? selection.owner : undefined
  const elsewhere: { guests: OwnedElsewhere[]; pools: OwnedElsewhere[]; jobs: OwnedElsewhere[] } = {
    guests: [],
    pools: [],
    jobs: [],
  }
  const byComment = (kind: 'pool' | 'backup-job', id: string, comment: string | undefined): boolean => {
    if (!owner || commentOwner(comment, owner) !== 'other') return false
    elsewhere[kind === 'pool' ? 'pools' : 'jobs'].push({ kind, id, marker: commentWord(comment) })
    return true
  }
  const declaredGuests = new Set<number>()
  let filteredOut = 0
  const keep = (g: { vmid: number; name?: string; tags: readonly string[] }): boolean => {
    const who = owner ? ownerOf(g.tags, owner) : undefined
    if (who?.kind === 'other') {
      const marker = who.entries.map((e) => `${owner!.ownershipTag}.${e}`).join(';')
      elsewhere.guests.push({ kind: 'guest', id: String(g.vmid), marker })
      return false
    }
    if (!selection.includeDeclared && selection.declaredVmids.has(g.vmid)) {
      declaredGuests.add(g.vmid)
      return false
    }
    if (!wanted(g)) {
      filteredOut++
      return false
    }
    return true
  }
  const guests = live.guests.filter(keep)
  const unknownGuests = live.unknownGuests.filter(keep)
  const declaredVolids = new Set<string>()
  const volumes = live.volumes.filter((v) => {
    if (!selection.includeDeclared && selection.declaredVolids.has(v.volid)) {
      declaredVolids.add(v.volid)
      return false
    }
    return !filtering
  })
  const declaredJobs: string[] = []
  const backupJobs = known(live.backupJobs)?.filter((j) => {
    if (byComment('backup-job', j.id, j.values.comment)) return false
    if (!selection.includeDeclared && selection.declaredJobs?.has(j.id)) {
      declaredJobs.push(j.id)
      return false
    }
    return !filtering
  })
  // Pool manifests like artifacts: only without a guest filter, never for one the repository declares (the
  // pools stay in the inventory: adopted guests still name theirs in spec.pool)
  const declaredPoolids: string[] = []
  const poolManifests: string[] = []
  for (const p of known(live.pools) ?? []) {
    if (byComment('pool', p.poolid, p.comment)) continue
    if (!selection.includeDeclared && selection.declaredPoolids?.has(p.poolid)) declaredPoolids.push(p.poolid)
    else if (!filtering) poolManifests.push(p.poolid)
  }
  // Storage manifests like pools: only without a guest filter, never for one the repository declares
  const storages = (live.storageConfigs ? known(live.storageConfigs) : undefined)?.filter(
    (s) => !filtering && (selection.includeDeclared || !selection.declaredStorages?.has(s.storage)),
  )
  return {
    live: {
      // the datacenter options like pools: only without a guest filter
      ...(filtering ? withoutClusterOptions(live) : live),
      guests,
      unknownGuests,
      volumes,
      ...(backupJobs ? { backupJobs: { known: backupJobs } } : {}),
      ...(storages ? { storageConfigs: { known: storages } } : {}),
    },
    poolManifests,
    declared: {
      guests: [...declaredGuests].sort((a, b) => a - b),
      volids: [...declaredVolids].sort(),
      jobs: declaredJobs.sort(),
      poolids: declaredPoolids.sort(),
    },
    filteredOut,
    ownedElsewhere: [
      ...elsewhere.guests.sort((a, b) => Number(a.id) - Number(b.id)),
      ...elsewhere.pools.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
      ...elsewhere.jobs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    ],
  }
}

function withoutClusterOptions(live: LiveInventory): LiveInventory {
  const { clusterOptions, ...rest } = live
  void clusterOptions
  return rest
}
