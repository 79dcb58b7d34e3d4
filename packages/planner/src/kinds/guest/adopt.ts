/** adopt: a live VM or container as a manifest, every config key mapped, ignored as bookkeeping, or a gap. */
/**
 * adopt(): a LiveInventory to manifests. Pure: no PVE, no files, no clock. The CLI writes the
 * documents as YAML, prints the gaps and lists, and merges `newSshKeys` into the SOPS file.
 *
 * Every live config key is either mapped to a manifest field, ignored as PVE bookkeeping, or reported as a
 * gap (with sensitive values redacted), so nothing on PVE is silently dropped.
 */
import { decodeSshKeys, SENSITIVE as REDACTED, sshKeyLines } from '@proxops/pve-client/wire'
import { API_VERSION, KIND_ROOT_OF, type Kind } from '@proxops/schema'
import type { LiveGuest } from '../../inventory.js'
import { IPCONFIG_TOKENS } from './cloud-init.js'
import { adoptCdAndCloudInit, bootOrderOf } from './drives.js'
import { isBookkeeping } from './keys.js'
import { ALL_FEATURE_TOKENS } from './lxc.js'
import { adoptNic } from './nics.js'
import { adoptTokens } from './tokens.js'
import { adoptFirmwareVolumes, adoptLxcVolumes, adoptQemuDisks, QEMU_DRIVE_KEY, PCI_TOKENS } from './volumes.js'
import { adoptBlock } from './table.js'
import { adoptTags } from './tags.js'
import { parsePS } from './fields.js'
import { mapSshKeys } from '../../kit/ssh.js'
import type { AdoptedFile, AdoptOptions, AdoptResult, Claim, Collect } from '../../kit/adopt.js'
import { sanitiseName } from '../../kit/names.js'

const SENSITIVE = new Set(['sshkeys', 'cipassword', 'password', 'sshkey', 'keyfile', 'secret'])

// ---------------------------------------------------------------- VM / TemplateVM

export function adoptVm(
  guest: LiveGuest,
  options: AdoptOptions & { tag: string },
  claim: Claim,
  collect: Collect,
  isoNames: ReadonlyMap<string, string>,
  census: AdoptResult['census'],
  newSshKeys: Map<string, string>,
): AdoptedFile {
  const kind: Kind = guest.template ? 'TemplateVM' : 'VM'
  const c = guest.config
  const reader = configReader(kind, guest, collect)
  const { used, gap, take } = reader
  const incomplete: string[] = []
  const name = claim(kind, sanitiseName(c.name, `vm-${guest.vmid}`), guest.vmid)
  const spec: Record<string, unknown> = { node: guest.node, vmid: guest.vmid }
  if (!guest.template) spec.state = guest.status === 'running' ? 'started' : 'stopped'
  else spec.state = 'stopped'
  Object.assign(spec, adoptBlock('qemu', 'pve-name', reader, name), adoptBlock('qemu', 'memory', reader))
  spec.cpu = adoptBlock('qemu', 'cpu', reader)

  // drives: the cloud-init and CD drives (kinds/guest/drives.ts), then the disks (kinds/guest/volumes.ts)
  const driveKeys = Object.keys(c)
    .sort()
    .filter((k) => QEMU_DRIVE_KEY.test(k))
  for (const key of driveKeys) used.add(key)
  const drives = adoptCdAndCloudInit(c, driveKeys, isoNames, gap)
  const hardware: Record<string, unknown> = drives.hardware
  const diskKeys = driveKeys.filter((k) => !drives.claimed.has(k))
  spec.disks = adoptQemuDisks(c, diskKeys, take('scsihw'), gap, incomplete)

  // NICs: PVE-assigned MACs are not pinned
  const networks = adoptNics('qemu', c, reader, incomplete, 'no bridge on PVE (user-mode NIC) is not modelled')
  if (networks.length > 0) spec.networks = networks

  // hardware
  Object.assign(hardware, adoptBlock('qemu', 'hardware', reader))
  Object.assign(hardware, adoptFirmwareVolumes(take('efidisk0'), take('tpmstate0'), gap))
  const pci: Record<string, unknown>[] = []
  for (const key of sortedSlots(c, /^hostpci(\d+)$/)) {
    used.add(key)
    const p = parsePS(c[key]!, 'host')
    if (p?.host === undefined) {
      gap(key, c[key]!, "PCI device not readable (PVE's property-string grammar)")
      continue
    }
    const device: Record<string, unknown> = { slot: key, device: p.host.toLowerCase() }
    adoptTokens(PCI_TOKENS, p, device, key, gap, 'PCI', ['host'])
    pci.push(device)
  }
  if (pci.length > 0) hardware['pci-devices'] = pci
  if (Object.keys(hardware).length > 0) spec.hardware = hardware

  // options: only truthy values are owned
  const opts: Record<string, unknown> = adoptBlock('qemu', 'options', reader)
  // the order qemu-server derived itself is bookkeeping: not pinned into the manifest
  const boot = isBookkeeping('qemu', 'boot', c) ? undefined : take('boot')
  if (boot !== undefined) {
    const order = bootOrderOf(boot)
    if (order !== undefined && order.length > 0) opts['boot-order'] = order
    else gap('boot', boot, 'legacy boot string is not modelled (use boot: order=...)')
  }
  if (Object.keys(opts).length > 0) spec.options = opts

  // cloud-init data
  const ci: Record<string, unknown> = adoptBlock('qemu', 'cloud-init-data', reader)
  const sshkeys = take('sshkeys')
  if (sshkeys) {
    let keys: string[] = []
    try {
      keys = sshKeyLines(decodeSshKeys(sshkeys))
    } catch {
      gap('sshkeys', sshkeys, 'not in PVE urlencoded format')
    }
    if (keys.length > 0) {
      const mapping = mapSshKeys(keys, options.sshKeys, options.importSshKeys === true && options.sshKeys !== undefined)
      if (mapping.refs) {
        ci['ssh-key-refs'] = mapping.refs
        for (const k of mapping.imported) newSshKeys.set(k.name, k.value)
      } else {
        ci['ssh-keys'] = ['*']
        census.unmatchedSshKeys++
      }
    }
  }
  if (take('cipassword') !== undefined) {
    census.cipassword++
    gap('cipassword', REDACTED, 'passwords are never adopted; map it to ci-password-ref by hand')
  }
  const ipconfigs: Record<string, unknown>[] = []
  for (const key of sortedSlots(c, /^ipconfig(\d+)$/)) {
    used.add(key)
    const p = parsePS(c[key]!)
    if (p?.ip === undefined || p.ip === 'dhcp') {
      gap(key, c[key]!, 'DHCP ipconfig (and one without ip) is not modelled')
      continue
    }
    const entry: Record<string, unknown> = { nic: Number(key.slice('ipconfig'.length)) }
    adoptTokens(IPCONFIG_TOKENS, p, entry, key, gap, 'ipconfig')
    ipconfigs.push(entry)
  }
  if (ipconfigs.length > 0) ci.ipconfigs = ipconfigs
  if (Object.keys(ci).length > 0) spec['cloud-init-data'] = ci

  return finishGuest(kind, name, guest, spec, incomplete, options, reader)
}

// ---------------------------------------------------------------- LXC / TemplateCT

export function adoptLxc(
  guest: LiveGuest,
  options: AdoptOptions & { tag: string },
  claim: Claim,
  collect: Collect,
): AdoptedFile {
  const kind: Kind = guest.template ? 'TemplateCT' : 'LXC'
  const c = guest.config
  const reader = configReader(kind, guest, collect)
  const { used, gap, take } = reader
  const incomplete: string[] = [
    'spec.template: PVE does not record the CTTemplate a container was created from; name it',
  ]
  gap('spec.template', '(unknown)', 'unrecoverable: PVE does not persist ostemplate')
  const name = claim(kind, sanitiseName(c.hostname, `ct-${guest.vmid}`), guest.vmid)
  const spec: Record<string, unknown> = { node: guest.node, vmid: guest.vmid }
  spec.state = !guest.template && guest.status === 'running' ? 'started' : 'stopped'
  Object.assign(spec, adoptBlock('lxc', 'memory', reader), adoptBlock('lxc', 'swap', reader))
  const cpu = adoptBlock('lxc', 'cpu', reader)
  if (Object.keys(cpu).length > 0) spec.cpu = cpu
  else incomplete.push('spec.cpu.cores: not set on PVE (the container may use every host core); state a value')

  const mountKeys = sortedSlots(c, /^mp(\d+)$/)
  for (const key of ['rootfs', ...mountKeys]) used.add(key)
  const volumes = adoptLxcVolumes(c, mountKeys, gap, incomplete)
  if (volumes.root) spec.root = volumes.root
  if (volumes.mountPoints.length > 0) spec['mount-points'] = volumes.mountPoints
  if (volumes.bindMounts.length > 0) spec['bind-mounts'] = volumes.bindMounts

  const networks = adoptNics('lxc', c, reader, incomplete, 'no bridge on PVE')
  if (networks.length > 0) spec.networks = networks

  const dns = adoptBlock('lxc', 'dns', reader, name)
  if (Object.keys(dns).length > 0) spec.dns = dns
  Object.assign(spec, adoptBlock('lxc', 'arch', reader))

  const opts = adoptBlock('lxc', 'options', reader)
  const features = take('features')
  if (features !== undefined) {
    const p = parsePS(features)
    if (p) adoptTokens(ALL_FEATURE_TOKENS, p, opts, 'features', gap, 'container feature')
    else gap('features', features, "not readable (PVE's property-string grammar)")
  }
  if (Object.keys(opts).length > 0) spec.options = opts

  return finishGuest(kind, name, guest, spec, incomplete, options, reader)
}

// ---------------------------------------------------------------- helpers

/** Reads a guest's config key by key, remembering what was used; `gap` records what the manifest cannot say. */
interface ConfigReader {
  used: Set<string>
  gap: (field: string, value: string, note: string) => void
  take: (key: string) => string | undefined
}

function configReader(kind: Kind, guest: LiveGuest, collect: Collect): ConfigReader {
  const used = new Set<string>()
  return {
    used,
    gap: (field, value, note) => {
      collect.gaps.push({
        kind,
        node: guest.node,
        id: String(guest.vmid),
        field,
        value: SENSITIVE.has(field.split('.')[0]!) ? REDACTED : value,
        note,
      })
    },
    take: (key) => {
      used.add(key)
      return guest.config[key]
    },
  }
}

/** The part every guest kind shares: description, tags (without the ownership claim), unmodelled keys, the file. */
function finishGuest(
  kind: Kind,
  name: string,
  guest: LiveGuest,
  spec: Record<string, unknown>,
  incomplete: string[],
  options: AdoptOptions & { tag: string },
  reader: ConfigReader,
): AdoptedFile {
  const { used, gap } = reader
  Object.assign(spec, adoptBlock(guest.type, 'pve-description', reader))
  const tags = adoptTags(guest.tags, options.tag)
  used.add('tags')
  if (tags.length > 0) spec.tags = tags

  const c = guest.config
  for (const key of Object.keys(c).sort()) {
    if (used.has(key) || isBookkeeping(guest.type, key, c)) continue
    gap(key, c[key]!, /^unused\d+$/.test(key) ? 'detached volume is not modelled' : 'config key not modelled')
  }
  return {
    path: `${KIND_ROOT_OF[kind]}/${options.cluster}/${name}.yaml`,
    kind,
    name,
    node: guest.node,
    vmid: guest.vmid,
    document: { apiVersion: API_VERSION, kind, metadata: { name }, spec },
    incomplete,
  }
}

/** The NICs of a guest through the NIC token table (kinds/guest/nics.ts), in slot order. */
function adoptNics(
  type: LiveGuest['type'],
  c: Readonly<Record<string, string>>,
  { used, gap }: ConfigReader,
  incomplete: string[],
  noBridge: string,
): Record<string, unknown>[] {
  const networks: Record<string, unknown>[] = []
  for (const key of sortedSlots(c, /^net(\d+)$/)) {
    used.add(key)
    const adopted = adoptNic(type, key, c[key]!, gap)
    if (!adopted) continue
    if (adopted.noBridge) incomplete.push(`spec.networks (${key}): ${noBridge}`)
    networks.push(adopted.nic)
  }
  return networks
}

function sortedSlots(config: Readonly<Record<string, string>>, pattern: RegExp): string[] {
  return Object.keys(config)
    .filter((k) => pattern.test(k))
    .sort((a, b) => Number(pattern.exec(a)![1]) - Number(pattern.exec(b)![1]))
}
