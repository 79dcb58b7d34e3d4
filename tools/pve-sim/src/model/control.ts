import { createHash } from 'node:crypto'
import type { Cluster, PowerState } from './cluster.js'
import { canonicalScalar } from './guestconf.js'
import { stopLxc } from './lxc.js'
import { GuestConfig } from './config.js'
import { driveVolid, formatOf, volumeKindOf } from './disks.js'
import { settledGuest } from './estate.js'
import { isLxcMountKey, isQemuVolumeKey } from './options.js'
import { parsePropString } from './propstring.js'
import { parseDiskSize } from './sizes.js'
import { fileFormat, splitVolid, volumeListItem, volumeOwner } from './storage.js'
import type { GuestInfo, GuestSpec, SimModel, TaskInfo, VolumeSpec } from './index.js'
import type { TaskBehaviour } from './tasks.js'
import type { Guest } from './cluster.js'

type Controls = Omit<SimModel, 'pveVersion' | 'pools' | 'setAclCleanup' | 'backupJob' | 'replicationJobExists'>

function info(g: Guest): GuestInfo {
  const out: GuestInfo = {
    vmid: g.vmid,
    type: g.type,
    node: g.node,
    status: g.status,
    config: g.conf.main(),
    pending: g.conf.pending(),
    pendingDelete: Object.fromEntries(g.conf.pendingDeletes()),
    digest: g.conf.digest(),
    rawLxc: g.conf.lxcPairs(),
  }
  const lock = g.conf.get('lock')
  if (lock !== undefined) out.lock = lock
  return out
}

/** what download-url would fetch: a registered file, or deterministic bytes derived from the URL */
export function remoteBytes(c: Cluster, url: string): Buffer | { error: string } {
  const r = c.remote.get(url)
  if (r && 'error' in r) return r
  return r ? r.content : Buffer.from(`pve-sim remote file ${url}\n`)
}

export function controls(c: Cluster): Controls {
  const need = (vmid: number): Guest => {
    c.settle()
    const g = c.guests.get(vmid)
    if (!g) throw new Error(`pve-sim: no guest ${vmid}`)
    return g
  }
  return {
    driftSet(vmid: number, key: string, value: string) {
      const g = need(vmid)
      // like `qm set`/`pct set` on the host: scalars are normalised (tags, booleans, description), the change is applied
      // at once (no hotplug step) and volume values are written as given
      g.conf.set(key, canonicalScalar(g.type, key, value))
    },
    driftDelete(vmid: number, key: string) {
      need(vmid).conf.delete(key)
    },
    driftPower(vmid: number, status: PowerState) {
      const g = need(vmid)
      // a stop outside the API: a container's post-stop hook still applies [PENDING]; a VM that shut
      // down from inside (or crashed) is cleaned up by `qm cleanup`, which leaves [PENDING] alone
      if (g.type === 'lxc' && g.status === 'running' && status === 'stopped') stopLxc(c, g, c.nodes.get(g.node)!)
      else c.setStatus(g, status)
    },
    setRawLxc(vmid: number, pairs: [string, string][]) {
      const g = need(vmid)
      if (g.type !== 'lxc') throw new Error(`pve-sim: ${vmid} is not a container`)
      // parse_pct_config only takes lxc.<key> lines; lxc.environment.runtime becomes the `env` option instead
      for (const [k, v] of pairs) {
        if (!/^lxc\.[a-z0-9_\-.]+$/.test(k) || k === 'lxc.environment.runtime')
          throw new Error(`pve-sim: not a raw lxc key: ${k}`)
        if (/\n/.test(v)) throw new Error(`pve-sim: newline in the value of ${k}`)
      }
      g.conf.setLxcPairs(pairs)
    },
    loadGuest(spec: GuestSpec) {
      loadGuest(c, spec)
    },
    configText(vmid: number) {
      c.settle()
      return c.guests.get(vmid)?.conf.text()
    },
    firewallText(vmid: number) {
      c.settle()
      return c.firewalls.files.get(vmid)
    },
    setFirewallText(vmid: number, text: string | undefined) {
      if (text === undefined || text === '') c.firewalls.files.delete(vmid)
      else c.firewalls.files.set(vmid, text)
    },
    clusterFirewallText() {
      c.settle()
      return c.firewalls.clusterText
    },
    setClusterFirewallText(text: string | undefined) {
      c.firewalls.clusterText = text === '' ? undefined : text
    },
    guest(vmid: number) {
      c.settle()
      const g = c.guests.get(vmid)
      return g ? info(g) : undefined
    },
    guests() {
      c.settle()
      return [...c.guests.values()].sort((a, b) => a.vmid - b.vmid).map(info)
    },
    tasks(): TaskInfo[] {
      return c.tasks.all().map((t) => {
        const out: TaskInfo = { upid: t.upid, node: t.node, type: t.type, id: t.id, status: t.status, log: [...t.log] }
        if (t.exitstatus !== undefined) out.exitstatus = t.exitstatus
        return out
      })
    },
    settle() {
      c.settle()
    },
    setLock(vmid: number, lock: string | null) {
      const g = need(vmid)
      if (lock === null) g.conf.delete('lock')
      else g.conf.set('lock', lock)
    },
    setFlockContention(vmid: number, held: boolean) {
      if (held) c.holdFlock(vmid, { mode: 'exclusive' })
      else c.releaseInjectedFlock(vmid)
    },
    setStorageOnline(storage: string, online: boolean) {
      if (!c.storage.get(storage)) throw new Error(`pve-sim: no storage ${storage}`)
      if (online) c.storage.offline.delete(storage)
      else c.storage.offline.add(storage)
    },
    setStorageLockContention(storage: string, held: boolean) {
      if (!c.storage.get(storage)) throw new Error(`pve-sim: no storage ${storage}`)
      if (held) c.storage.lockHeld.add(storage)
      else c.storage.lockHeld.delete(storage)
    },
    setTaskBehaviour(type: string, behaviour: TaskBehaviour | null) {
      c.tasks.setBehaviour(type, behaviour ?? undefined)
    },
    setTaskDuration(ms: number) {
      c.tasks.defaultDurationMs = ms
    },
    setNoSuchTaskWindow(ms: number) {
      c.tasks.noSuchTaskWindowMs = ms
    },
    setResourcesLag(ms: number) {
      c.resourcesLagMs = ms
    },
    setHaLag(ms: number) {
      c.ha.lagMs = ms
    },
    haLog() {
      c.settle()
      return [...c.ha.manager.log]
    },
    setNodeOnline(node: string, online: boolean) {
      const n = c.nodes.get(node)
      if (!n) throw new Error(`pve-sim: no node ${node}`)
      c.settle()
      n.online = online
      if (online) {
        // a failed node that is back was reset: it rejoins with its guests stopped
        delete n.failed
        c.ha.manager.wakeNode(node)
      }
    },
    failNode(node: string, timing: { fenceDelayMs?: number; agentLockMs?: number } = {}) {
      const n = c.nodes.get(node)
      if (!n) throw new Error(`pve-sim: no node ${node}`)
      c.settle()
      if (n.failed) return
      // PVE: a 60 s fence delay and a 120 s agent lock timeout, six and twelve CRM cycles of 10 s
      const cycle = c.ha.lagMs
      n.online = false
      n.failed = {
        atMs: c.now(),
        fenceDelayMs: timing.fenceDelayMs ?? 6 * cycle,
        agentLockMs: timing.agentLockMs ?? 12 * cycle,
      }
      for (const g of [...c.guests.values()].sort((a, b) => a.vmid - b.vmid))
        if (g.node === node && g.status === 'running') c.setStatus(g, 'stopped')
      c.ha.manager.wakeAll()
    },
    setIgnoresShutdown(vmid: number, ignores: boolean) {
      need(vmid).ignoresShutdown = ignores
    },
    addVolume(node: string, storage: string, spec: VolumeSpec) {
      const n = c.nodes.get(node)
      const d = n?.storage.def(storage)
      if (!n || !d) throw new Error(`pve-sim: no storage ${storage} on ${node}`)
      if (!d.content.includes(spec.content))
        throw new Error(`pve-sim: storage ${storage} has no content type ${spec.content}`)
      const format = spec.content === 'backup' ? 'vma.zst' : fileFormat(spec.content, spec.filename)
      if (format === undefined) throw new Error(`pve-sim: wrong file extension for ${spec.content}: ${spec.filename}`)
      const volid = `${storage}:${spec.content}/${spec.filename}`
      const checksums: Record<string, string> = {}
      if (spec.data !== undefined)
        for (const a of ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512'])
          checksums[a] = createHash(a).update(spec.data).digest('hex')
      n.storage.add(storage, {
        volid,
        content: spec.content,
        format,
        size: spec.size ?? 2 * 1024 ** 3,
        ctime: Math.floor(c.now() / 1000),
        checksums,
      })
      return volid
    },
    storageContent(node: string, storage: string) {
      c.settle()
      const n = c.nodes.get(node)
      const type = n?.storage.def(storage)?.type
      return n?.storage.list(storage).map((v) => volumeListItem(v, type)) ?? []
    },
    writeVolume(node: string, volid: string, data: string) {
      c.settle()
      const v = c.nodes.get(node)?.storage.get(volid)
      if (!v) throw new Error(`pve-sim: no volume ${volid} on ${node}`)
      v.data = data
    },
    readVolume(node: string, volid: string) {
      c.settle()
      return c.nodes.get(node)?.storage.get(volid)?.data
    },
    imageInfoRuns() {
      return c.storage.imageInfoRuns
    },
    setRemoteFile(
      url: string,
      file: { content: string | Buffer; size?: number; untrustedCertificate?: boolean } | { error: string },
    ) {
      c.remote.set(url, 'error' in file ? file : { content: Buffer.from(file.content) })
      if (!('error' in file) && file.size !== undefined) c.remoteSizes.set(url, file.size)
      if (!('error' in file) && file.untrustedCertificate === true) c.untrustedCertificates.add(url)
      else c.untrustedCertificates.delete(url)
    },
    remoteChecksum(url: string, algorithm: string) {
      const b = remoteBytes(c, url)
      if (!Buffer.isBuffer(b)) throw new Error(`pve-sim: ${url} is unreachable`)
      return createHash(algorithm).update(b).digest('hex')
    },
  }
}

/**
 * A guest whose config file already exists, as if created long ago (past the /cluster/resources lag), the way
 * the preloaded estate is built: the config is stored as given, and every volume it names as its own
 * (`vm-<vmid>-...`) is registered on the guest's node with the `size=` the value carries.
 */
function loadGuest(c: Cluster, spec: GuestSpec): void {
  const { vmid, type, node: nodeName, config } = spec
  const node = c.nodes.get(nodeName)
  if (!node) throw new Error(`pve-sim: no node ${nodeName}`)
  if (c.guests.has(vmid)) throw new Error(`pve-sim: guest ${vmid} exists`)
  const past = c.now() - 3_600_000
  const ctime = Math.floor(past / 1000)
  const lxc = type === 'lxc'
  for (const [key, value] of Object.entries(config)) {
    // an unusedN value is a bare volume id
    const unused = /^unused\d+$/.test(key)
    if (!unused && !(lxc ? isLxcMountKey(key) : isQemuVolumeKey(key))) continue
    const kind = volumeKindOf(key, lxc)
    const volid = unused ? value : driveVolid(value, kind)
    const [storage, name] = volid ? (splitVolid(volid) ?? []) : []
    if (!volid || !storage || !name || volumeOwner(name) !== vmid || node.storage.get(volid)) continue
    if (!node.storage.def(storage)) throw new Error(`pve-sim: guest ${vmid}: no storage ${storage} on ${nodeName}`)
    const size = unused ? 0 : (parseDiskSize(parsePropString(value, formatOf(kind)).size ?? '') ?? 0)
    const format = name.startsWith('subvol-') ? 'subvol' : (/\.(raw|qcow2|vmdk)$/.exec(name)?.[1] ?? 'raw')
    node.storage.add(storage, { volid, content: lxc ? 'rootdir' : 'images', format, size, ctime, vmid })
  }
  settledGuest(c, vmid, type, nodeName, new GuestConfig({ ...config }), spec.status === 'running', past)
}
