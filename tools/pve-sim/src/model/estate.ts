import type { Cluster, Guest } from './cluster.js'
import type { GuestType } from './options.js'
import { GuestConfig } from './config.js'
import { GiB, formatSize } from './sizes.js'

/**
 * A preloaded estate: N guests spread over the nodes, derived from the seed only, as if they had
 * existed for a while (past the /cluster/resources lag). Built directly (no tasks) so 10,000 guests
 * load in well under a second.
 */
export const ESTATE_ARTIFACTS = {
  vztmpl: 'debian-12-standard_12.7-1_amd64.tar.zst',
  import: 'debian-12-genericcloud-amd64.qcow2',
  iso: 'debian-12.7.0-amd64-netinst.iso',
}

export function preloadEstate(c: Cluster, guests: number): void {
  const nodes = [...c.nodes.values()]
  const past = c.now() - 3_600_000
  const ctime = Math.floor(past / 1000)
  for (const n of nodes) {
    n.storage.add('local', {
      volid: `local:vztmpl/${ESTATE_ARTIFACTS.vztmpl}`,
      content: 'vztmpl',
      format: 'tzst',
      size: 126 * 1024 * 1024,
      ctime,
    })
    n.storage.add('local', {
      volid: `local:import/${ESTATE_ARTIFACTS.import}`,
      content: 'import',
      format: 'qcow2',
      size: 2 * GiB,
      ctime,
    })
    n.storage.add('local', {
      volid: `local:iso/${ESTATE_ARTIFACTS.iso}`,
      content: 'iso',
      format: 'iso',
      size: 631 * 1024 * 1024,
      ctime,
    })
  }
  const tagPool = ['prod', 'dev', 'web', 'db', 'cache', 'edge', 'batch']
  for (let i = 0; i < guests; i++) {
    const vmid = 1000 + i
    const node = nodes[i % nodes.length]
    if (!node) break
    const template = i % 250 === 0
    const lxc = !template && c.rng.next() < 0.2
    const running = !template && c.rng.next() < 0.6
    const diskGiB = 8 * (1 + c.rng.int(8))
    const tags = [tagPool[c.rng.int(tagPool.length)] as string, tagPool[c.rng.int(tagPool.length)] as string]
    const conf: Record<string, string> = { tags: [...new Set(tags)].sort().join(';') }
    if (lxc) {
      const v = node.storage.allocDisk('local-lvm', vmid, diskGiB * GiB, { ct: true, ctime })
      Object.assign(conf, {
        arch: 'amd64',
        cores: String(1 + c.rng.int(4)),
        hostname: `ct-${vmid}`,
        memory: String(512 * (1 + c.rng.int(4))),
        net0: `name=eth0,bridge=vmbr0,firewall=1,hwaddr=${c.rng.mac()},ip=dhcp,type=veth`,
        ostype: 'debian',
        rootfs: `${v.volid},size=${formatSize(diskGiB * GiB)}`,
        swap: '512',
        unprivileged: '1',
      })
    } else {
      const v = node.storage.allocDisk('local-lvm', vmid, diskGiB * GiB, { ctime })
      Object.assign(conf, {
        boot: 'order=scsi0;net0',
        cores: String(1 + c.rng.int(4)),
        memory: String(1024 * (1 + c.rng.int(8))),
        meta: `creation-qemu=${c.version.qemu},ctime=${ctime}`,
        name: `vm-${vmid}`,
        net0: `virtio=${c.rng.mac()},bridge=vmbr0,firewall=1`,
        ostype: 'l26',
        scsi0: `${v.volid},discard=on,iothread=1,size=${formatSize(diskGiB * GiB)}`,
        scsihw: 'virtio-scsi-single',
        smbios1: `uuid=${c.rng.uuid()}`,
        sockets: '1',
        vmgenid: c.rng.uuid(),
      })
    }
    if (template) {
      // a VM template: template flag and base- disk names, as `qm template` leaves them
      const base = node.storage.renameToBase(`local-lvm:vm-${vmid}-disk-0`)
      conf.scsi0 = (conf.scsi0 as string).replace(`local-lvm:vm-${vmid}-disk-0`, base)
      conf.template = '1'
      conf.name = `tmpl-${vmid}`
    }
    settledGuest(c, vmid, lxc ? 'lxc' : 'qemu', node.name, new GuestConfig(conf), running, past)
  }
}

/** A guest that has existed since `past` (older than the /cluster/resources lag), stopped or running since then. */
export function settledGuest(
  c: Cluster,
  vmid: number,
  type: GuestType,
  node: string,
  conf: GuestConfig,
  running: boolean,
  past: number,
): Guest {
  const g = c.addGuest(vmid, type, node, conf)
  g.createdMs = past
  g.statusChangedMs = past
  if (running) {
    g.status = 'running'
    g.startedMs = past
  }
  g.seenStatus = g.status
  return g
}
