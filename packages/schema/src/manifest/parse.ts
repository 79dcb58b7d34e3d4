/**
 * parseManifest: one YAML document (as plain JS data) -> a normalised {@link Manifest} or a list of issues,
 * each with a stable code and the path of the offending field.
 */
import { isIP } from 'node:net'
import * as v from 'valibot'
import { type ErrorCode, splitIssueMessage } from '../errors.js'
import { reservedExtraKey, EXTRA_KEY } from '../extra.js'
import { API_VERSION, KINDS, type Kind, canonicalKind } from '../kinds.js'
import { REF_NAME, checkArtifactFilename, checkResourceName } from '../names.js'
import { checkHa } from './ha.js'
import { CLOUD_INIT_SLOT, cdSlot } from './drive-slots.js'
import { manifestSchemas } from './schemas.js'
import { finaliseBackupJob } from '../backup/finalise.js'
import type { RawBackupJobSpec } from '../backup/types.js'
import type { ArtifactSpec, LxcSpec, Manifest, PoolSpec, VmSpec } from './types.js'
import { newPoolIdProblem } from './pool.js'
import { nearest } from '../suggest.js'
import { checkFirewall } from './firewall.js'
import { FORMAT_REQUIRES, unmetRequires } from '../pve-requires.js'
import { emptyKeysRead } from '../null-keys.js'

export type PathKey = string | number
export interface ManifestIssue {
  code: ErrorCode
  /** field path inside the document, e.g. `['spec', 'disks', 0, 'size']` */
  path: PathKey[]
  message: string
}

export type ParseResult = { ok: true; manifest: Manifest } | { ok: false; issues: ManifestIssue[] }

/** Dotted form of a path: `spec.disks[0].size`. */
export function formatPath(path: readonly PathKey[]): string {
  let out = ''
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`
    else if (/^[A-Za-z0-9_-]+$/.test(k)) out += out ? `.${k}` : k
    else out += `[${JSON.stringify(k)}]`
  }
  return out
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}

/** Validates and normalises one manifest document. */
export function parseManifest(doc: unknown): ParseResult {
  if (!isPlainObject(doc)) {
    return {
      ok: false,
      issues: [
        {
          code: 'yaml-not-mapping',
          path: [],
          message: 'a manifest must be a mapping with apiVersion, kind, metadata and spec',
        },
      ],
    }
  }
  const issues: ManifestIssue[] = []
  if (doc.apiVersion === undefined) {
    issues.push({
      code: 'field-required',
      path: [],
      message: `missing required field "apiVersion" (write apiVersion: ${API_VERSION})`,
    })
  } else if (doc.apiVersion !== API_VERSION) {
    issues.push({
      code: 'api-version',
      path: ['apiVersion'],
      message: `apiVersion ${JSON.stringify(doc.apiVersion)} is not supported: write "${API_VERSION}"`,
    })
  }
  let kind: Kind | undefined
  if (doc.kind === undefined) {
    issues.push({
      code: 'field-required',
      path: [],
      message: `missing required field "kind" (one of ${KINDS.join(', ')})`,
    })
  } else if (typeof doc.kind !== 'string' || (kind = canonicalKind(doc.kind)) === undefined) {
    issues.push({
      code: 'kind-unknown',
      path: ['kind'],
      message: `kind ${JSON.stringify(doc.kind)} is unknown: use one of ${KINDS.join(', ')} (aliases TVM, TEMPLATE, TCT, CTT, DISK; any case)`,
    })
  }
  if (kind === undefined) return { ok: false, issues }

  const schema = manifestSchemas[kind]
  // a mapping or list key written with nothing under it reads as left out (null-keys.ts)
  const read = emptyKeysRead(schema, doc) as Record<string, unknown>
  const result = v.safeParse(schema, { ...read, apiVersion: API_VERSION })
  if (!result.success) {
    for (const issue of result.issues) issues.push(convertIssue(issue, schema))
    return { ok: false, issues }
  }
  if (issues.length > 0) return { ok: false, issues }
  const raw = { ...(result.output as Record<string, unknown>), kind } as unknown as Manifest
  const manifest = finalise(raw, issues)
  return issues.length > 0 ? { ok: false, issues } : { ok: true, manifest }
}

// ---------------------------------------------------------------- valibot issue conversion

/**
 * The one place a valibot issue becomes a message. The schema's own messages (tagged with a code) are kept as
 * written (the loader puts the field's path before them, {@link withPath}); the generic ones name the field by
 * its full path (`spec.cpu.type`), since the last key alone (`type`) is ambiguous in a manifest.
 */
function convertIssue(issue: v.BaseIssue<unknown>, root: v.GenericSchema): ManifestIssue {
  const path: PathKey[] = (issue.path ?? []).map((p) => p.key as PathKey)
  const tagged = splitIssueMessage(issue.message)
  if (tagged) return { code: tagged.code, path, message: tagged.text }
  const last = path[path.length - 1]
  const field = JSON.stringify(formatPath(path))
  if ((issue.type === 'strict_object' || issue.type === 'object') && issue.expected === 'never') {
    const known = knownKeysAt(root, path.slice(0, -1))
    const hint = typeof last === 'string' ? nearest(last, known) : undefined
    return {
      code: 'field-unknown',
      path,
      message: `unknown field ${field}${hint ? `: did you mean "${hint}"?` : ''}${known.length ? ` (known: ${known.join(', ')})` : ''}`,
    }
  }
  if ((issue.type === 'strict_object' || issue.type === 'object') && issue.received === 'undefined') {
    return { code: 'field-required', path, message: `missing required field ${field}` }
  }
  return {
    code: 'field-type',
    path,
    message: withPath(path, `expected ${issue.expected ?? 'another type'}, got ${issue.received}`),
  }
}

/**
 * `spec.cpu.cores: must be ...`: a message as a person reads it in a list of problems, naming its field by the full
 * path; one that already names it is kept as it is.
 */
export function withPath(path: readonly PathKey[], text: string): string {
  const where = formatPath(path)
  return where === '' || text.includes(where) ? text : `${where}: ${text}`
}

/** Walks the schema along a path to list the keys an object accepts there. */
function knownKeysAt(schema: unknown, path: readonly PathKey[]): string[] {
  let s = schema as Record<string, unknown> | undefined
  const unwrap = (): void => {
    for (;;) {
      if (!s) return
      if (Array.isArray(s.pipe)) s = s.pipe[0] as Record<string, unknown>
      else if (s.type === 'optional' || s.type === 'nullable' || s.type === 'nullish')
        s = s.wrapped as Record<string, unknown>
      else return
    }
  }
  unwrap()
  for (const key of path) {
    if (!s) return []
    if (typeof key === 'number') s = s.item as Record<string, unknown>
    else s = (s.entries as Record<string, Record<string, unknown>> | undefined)?.[key]
    unwrap()
  }
  return s && s.entries ? Object.keys(s.entries) : []
}

// ---------------------------------------------------------------- cross-field rules and context defaults

type Add = (code: ErrorCode, path: PathKey[], message: string) => void

function finalise(m: Manifest, issues: ManifestIssue[]): Manifest {
  const add: Add = (code, path, message) => issues.push({ code, path, message })
  checkAnnotations(m.metadata.annotations, add)
  switch (m.kind) {
    case 'VM':
    case 'TemplateVM':
      finaliseVm(m.kind, m.metadata.name, m.spec, add)
      break
    case 'LXC':
    case 'TemplateCT':
      finaliseLxc(m.kind, m.metadata.name, m.spec, add)
      break
    case 'BackupJob':
      // the spec is still the schema's output here (`raw` below): finaliseBackupJob rewrites it in place
      finaliseBackupJob(m.metadata.name, m.spec as unknown as RawBackupJobSpec, add)
      break
    case 'Pool':
      finalisePool(m.metadata.name, m.spec, add)
      break
    default:
      finaliseArtifact(m.kind, m.spec, add)
  }
  // after the kind's own rules, which default the NIC slots
  if ((m.kind === 'VM' || m.kind === 'TemplateVM' || m.kind === 'LXC' || m.kind === 'TemplateCT') && m.spec.firewall) {
    checkFirewall(m.spec.firewall, m.spec.networks, add)
  }
  return m
}

/** `proxops/depends-on` item grammar. */
export const DEPENDS_ON_ITEM = /^([A-Za-z]+):([A-Za-z0-9._-]+)$/
export const DEPENDS_ON = 'proxops/depends-on'
export const DISRUPTION = 'proxops/disruption'
/** Disruption policies, least to most disruptive; `allow` is `stop` (every class applied). */
export const DISRUPTION_POLICIES = ['none', 'hotplug', 'reboot', 'stop', 'allow'] as const
/** `"true"` or `"false"`: safety snapshots for this guest, whatever the cluster's `safety-snapshots` says */
export const SAFETY_SNAPSHOTS = 'proxops/safety-snapshots'
/** how many safety snapshots a guest keeps when the cluster entry does not say (`safety-snapshots.keep`) */
export const DEFAULT_SAFETY_SNAPSHOT_KEEP = 3

/** Parses a `proxops/depends-on` value into canonical (kind, name) pairs, or returns the first problem. */
export function parseDependsOn(
  value: string,
): { ok: true; refs: Array<{ kind: Kind; name: string }> } | { ok: false; message: string } {
  const refs: Array<{ kind: Kind; name: string }> = []
  for (const raw of value.split(',')) {
    const item = raw.trim()
    if (item === '') continue
    const match = DEPENDS_ON_ITEM.exec(item)
    if (!match)
      return {
        ok: false,
        message: `${DEPENDS_ON} item ${JSON.stringify(item)} must look like Kind:name (e.g. "ISO:debian-13")`,
      }
    const kind = canonicalKind(match[1]!)
    if (!kind)
      return {
        ok: false,
        message: `${DEPENDS_ON} item ${JSON.stringify(item)} names unknown kind ${JSON.stringify(match[1])}: use one of ${KINDS.join(', ')}`,
      }
    refs.push({ kind, name: match[2]! })
  }
  return { ok: true, refs }
}

function checkAnnotations(annotations: Record<string, string>, add: Add): void {
  for (const [key, value] of Object.entries(annotations)) {
    const path = ['metadata', 'annotations', key]
    if (key === DEPENDS_ON) {
      const r = parseDependsOn(value)
      if (!r.ok) add('annotation-invalid', path, r.message)
    } else if (key === DISRUPTION) {
      if (!(DISRUPTION_POLICIES as readonly string[]).includes(value.trim())) {
        add('annotation-invalid', path, `${DISRUPTION} must be one of ${DISRUPTION_POLICIES.join(', ')}`)
      }
    } else if (key === SAFETY_SNAPSHOTS) {
      if (value.trim() !== 'true' && value.trim() !== 'false')
        add('annotation-invalid', path, `${SAFETY_SNAPSHOTS} must be "true" or "false"`)
    } else if (key.startsWith('proxops/')) {
      add(
        'annotation-invalid',
        path,
        `unknown annotation ${JSON.stringify(key)}: ProxOps reads only ${DEPENDS_ON}, ${DISRUPTION} and ${SAFETY_SNAPSHOTS}`,
      )
    }
  }
}

function dedupe(list: string[]): string[] {
  return [...new Set(list)]
}

function checkExtra(family: 'qemu' | 'lxc', extra: Record<string, string>, add: Add): void {
  for (const key of Object.keys(extra)) {
    const path = ['spec', 'extra', key]
    if (!EXTRA_KEY.test(key)) {
      add('extra-key-invalid', path, `spec.extra key ${JSON.stringify(key)} is not a PVE parameter name`)
      continue
    }
    const reason = reservedExtraKey(family, key)
    if (reason) add('extra-reserved-key', path, reason)
  }
}

// qemu-server's drive buses (PVE::QemuServer::Drive, MAX_*_DISKS); PVE has no nvme disk bus
const DISK_BUS = /^(scsi|virtio|sata|ide)(\d+)$/
const BUS_MAX: Readonly<Record<string, number>> = { scsi: 30, virtio: 15, sata: 5, ide: 3 }

function checkCidr(value: string): boolean {
  const slash = value.indexOf('/')
  if (slash < 0) return false
  const addr = value.slice(0, slash)
  const prefix = value.slice(slash + 1)
  const family = isIP(addr)
  if (!family || !/^\d{1,3}$/.test(prefix)) return false
  return Number(prefix) <= (family === 4 ? 32 : 128)
}

function finaliseVm(kind: 'VM' | 'TemplateVM', name: string, spec: VmSpec, add: Add): void {
  if (kind === 'TemplateVM' && spec.state !== 'stopped') {
    add('template-state', ['spec', 'state'], 'a TemplateVM is always stopped: remove state or write state: stopped')
  }
  spec['pve-name'] ??= name
  if (!HOSTNAME.test(spec['pve-name']))
    add(
      'field-invalid',
      ['spec', 'pve-name'],
      `pve-name ${JSON.stringify(spec['pve-name'])} must be a DNS name (letters, digits, "-" and ".")`,
    )
  spec.tags = dedupe(spec.tags)
  checkExtra('qemu', spec.extra, add)
  if (spec.ha) checkHa(kind, spec.ha, spec.state, spec.node, add)

  if (spec.clone !== undefined) {
    if (kind === 'TemplateVM') add('field-invalid', ['spec', 'clone'], 'clone is only supported for kind VM')
    if (spec.disks.length > 0)
      add(
        'clone-with-disks',
        ['spec', 'disks'],
        'a clone-backed VM takes its disks from the template: remove spec.disks (or remove clone)',
      )
  } else if (spec.disks.length === 0) {
    add('disks-required', ['spec'], 'declare at least one disk in spec.disks (or set spec.clone to clone a TemplateVM)')
  }

  const hw = spec.hardware
  const ciEnabled = hw?.['cloud-init']?.enabled === true
  const reservedSlots = new Map<string, string>()
  if (ciEnabled) reservedSlots.set(CLOUD_INIT_SLOT, 'the cloud-init drive')
  if (hw?.cdrom) reservedSlots.set(cdSlot(ciEnabled), 'the CD/DVD drive')

  const seen = new Map<string, number>()
  spec.disks.forEach((disk, i) => {
    const p: PathKey[] = ['spec', 'disks', i]
    disk.interface = (disk.interface ?? `scsi${i}`).trim()
    if (disk.size !== undefined && disk.image !== undefined) {
      add(
        'disk-size-with-image',
        [...p, 'size'],
        'an image-seeded disk takes its size from the image: remove size (or image)',
      )
    } else if (disk.size === undefined && disk.image === undefined) {
      add('disk-size-missing', p, 'a disk needs a size (e.g. size: 32GiB) or an image (the name of a DiskImage)')
    }
    const bus = DISK_BUS.exec(disk.interface)
    if (!bus || Number(bus[2]) > BUS_MAX[bus[1]!]!) {
      add(
        'disk-interface-invalid',
        [...p, 'interface'],
        `interface ${JSON.stringify(disk.interface)} must be scsi0-30, virtio0-15, sata0-5 or ide0-3 (PVE has no nvme disk bus)`,
      )
    } else if (disk.ssd !== undefined && bus[1] === 'virtio') {
      add(
        'ssd-bus',
        [...p, 'ssd'],
        `ssd is not supported on ${bus[1]} disks: use a scsi, sata or ide interface, or remove ssd`,
      )
    } else if (disk.iothread && (bus[1] === 'sata' || bus[1] === 'ide')) {
      // PVE's sata/ide drive formats have no iothread property: the create would fail with a 400
      add(
        'iothread-bus',
        [...p, 'iothread'],
        `iothread is only supported on scsi and virtio disks: use one of those interfaces, or remove iothread`,
      )
    }
    const prev = seen.get(disk.interface)
    if (prev !== undefined)
      add('slot-duplicate', [...p, 'interface'], `disk slot ${disk.interface} is already used by spec.disks[${prev}]`)
    else seen.set(disk.interface, i)
    const claimed = reservedSlots.get(disk.interface)
    if (claimed) add('slot-duplicate', [...p, 'interface'], `disk slot ${disk.interface} is used by ${claimed}`)
  })

  const nicSlots = new Map<string, number>()
  spec.networks.forEach((nic, i) => {
    nic.slot = (nic.slot ?? `net${i}`).trim()
    checkSlot(
      nic.slot,
      /^net(\d+)$/,
      31,
      'netN (N 0-31)',
      ['spec', 'networks', i, 'slot'],
      nicSlots,
      i,
      'spec.networks',
      add,
    )
  })

  if (hw) {
    if (hw.cdrom && hw.cdrom.iso !== 'none') {
      const bad = checkResourceName(hw.cdrom.iso)
      if (bad)
        add('name-invalid', ['spec', 'hardware', 'cdrom', 'iso'], `${bad} (or write none to keep the drive empty)`)
      // qemu-server's create and update refuse an ISO without media=cdrom
      if (hw.cdrom.media === 'disk')
        add(
          'field-invalid',
          ['spec', 'hardware', 'cdrom', 'media'],
          'media: disk attaches the ISO as a hard disk, which PVE refuses ("explicit \'media=cdrom\' is required for iso images"); write media: cdrom or leave it out',
        )
    }
    const ci = hw['cloud-init']
    if (ci?.enabled && ci.storage === undefined) {
      add(
        'field-required',
        ['spec', 'hardware', 'cloud-init'],
        'missing required field "storage": a cloud-init drive needs a storage with images content',
      )
    }
    const pciSlots = new Map<string, number>()
    hw['pci-devices'].forEach((dev, i) => {
      const prev = pciSlots.get(dev.slot)
      if (prev !== undefined)
        add(
          'slot-duplicate',
          ['spec', 'hardware', 'pci-devices', i, 'slot'],
          `PCI slot ${dev.slot} is already used by pci-devices[${prev}]`,
        )
      else pciSlots.set(dev.slot, i)
    })
    hw['pci-devices'].sort((a, b) => Number(a.slot.slice(7)) - Number(b.slot.slice(7)))
  }

  const bootOrder = spec.options?.['boot-order']
  if (bootOrder) {
    const seenBoot = new Set<string>()
    bootOrder.forEach((entry, i) => {
      if (entry.trim() === '')
        add('field-invalid', ['spec', 'options', 'boot-order', i], 'boot-order entries must not be empty')
      else if (seenBoot.has(entry))
        add('value-duplicate', ['spec', 'options', 'boot-order', i], `boot-order lists ${entry} twice`)
      seenBoot.add(entry)
    })
  }

  const ci = spec['cloud-init-data']
  if (ci) {
    const p = ['spec', 'cloud-init-data']
    const keys = ci['ssh-keys']
    if (keys && ci['ssh-key-refs'])
      add('ssh-keys-conflict', [...p, 'ssh-key-refs'], 'use either ssh-keys or ssh-key-refs, not both')
    if (keys && keys.includes('*') && keys.length > 1)
      add(
        'ssh-keys-conflict',
        [...p, 'ssh-keys'],
        'ssh-keys: ["*"] leaves keys to PVE and cannot be mixed with real keys',
      )
    keys?.forEach((k, i) => {
      if (k.trim() === '') add('field-invalid', [...p, 'ssh-keys', i], 'ssh-keys entries must not be empty')
    })
    ci['ssh-key-refs']?.forEach((ref, i) => {
      if (!checkRef(ref, 'cloud-init.ssh-keys.'))
        add(
          'ref-invalid',
          [...p, 'ssh-key-refs', i],
          `ssh-key-refs entries must look like cloud-init.ssh-keys.<name> (name: lowercase letters, digits, "-"), got ${JSON.stringify(ref)}`,
        )
    })
    const pw = ci['ci-password-ref']
    if (pw !== undefined && !checkRef(pw, 'cloud-init.passwords.')) {
      add(
        'ref-invalid',
        [...p, 'ci-password-ref'],
        `ci-password-ref must look like cloud-init.passwords.<name>, got ${JSON.stringify(pw)}`,
      )
    }
    const nics = new Map<number, number>()
    ci.ipconfigs?.forEach((ipc, i) => {
      const q = [...p, 'ipconfigs', i]
      if (ipc.ip !== undefined && ipc.ip !== '' && !checkCidr(ipc.ip))
        add(
          'ipconfig-invalid',
          [...q, 'ip'],
          `ip ${JSON.stringify(ipc.ip)} must be an address in CIDR form, e.g. 192.168.1.10/24 (DHCP is not modelled)`,
        )
      if (ipc.gateway !== undefined && ipc.gateway !== '') {
        if (!isIP(ipc.gateway))
          add('ipconfig-invalid', [...q, 'gateway'], `gateway ${JSON.stringify(ipc.gateway)} must be an IP address`)
        else if (unmetRequires(FORMAT_REQUIRES['pve-qm-ipconfig'], { gw: ipc.gateway, ip: ipc.ip || undefined }).length)
          add('ipconfig-invalid', [...q, 'gateway'], "a gateway requires ip (PVE's ipconfig: gw requires ip)")
      }
      const prev = nics.get(ipc.nic)
      if (prev !== undefined)
        add('slot-duplicate', [...q, 'nic'], `ipconfig for nic ${ipc.nic} is already declared by ipconfigs[${prev}]`)
      else nics.set(ipc.nic, i)
    })
  }
}

function checkRef(ref: string, prefix: string): boolean {
  return ref.startsWith(prefix) && REF_NAME.test(ref.slice(prefix.length))
}

function checkSlot(
  slot: string,
  pattern: RegExp,
  max: number,
  form: string,
  path: PathKey[],
  seen: Map<string, string | number>,
  index: number | string,
  listName: string,
  add: Add,
): void {
  const mm = pattern.exec(slot)
  if (!mm || Number(mm[1]) > max) {
    add('slot-invalid', path, `slot ${JSON.stringify(slot)} must be ${form}`)
    return
  }
  const prev = seen.get(slot)
  if (prev !== undefined)
    add(
      'slot-duplicate',
      path,
      `slot ${slot} is already used by ${typeof prev === 'number' ? `${listName}[${prev}]` : prev}`,
    )
  else seen.set(slot, typeof index === 'number' ? index : index)
}

const SYSTEM_ROOTS = new Set([
  '/',
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/proc',
  '/root',
  '/run',
  '/sbin',
  '/srv',
  '/sys',
  '/usr',
  '/var',
])
const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/

function finaliseLxc(kind: 'LXC' | 'TemplateCT', name: string, spec: LxcSpec, add: Add): void {
  if (kind === 'TemplateCT' && spec.state !== 'stopped') {
    add('template-state', ['spec', 'state'], 'a TemplateCT is always stopped: remove state or write state: stopped')
  }
  spec.tags = dedupe(spec.tags)
  checkExtra('lxc', spec.extra, add)
  if (spec.clone !== undefined) {
    if (kind === 'TemplateCT') add('field-invalid', ['spec', 'clone'], 'clone is only supported for kind LXC')
    // a full clone copies the template's root filesystem and mount points; ProxOps' config is written after it
    if (spec.template !== undefined)
      add(
        'clone-with-template',
        ['spec', 'template'],
        'a clone-backed LXC is not created from a CTTemplate: remove spec.template (or remove clone)',
      )
    for (const key of ['mount-points', 'bind-mounts'] as const)
      if (spec[key].length > 0)
        add(
          'clone-with-disks',
          ['spec', key],
          `a clone-backed LXC takes its mount points from the TemplateCT: remove spec.${key} (or remove clone)`,
        )
  } else if (spec.template === undefined) {
    add(
      'field-required',
      ['spec', 'template'],
      'spec.template is required (the CTTemplate to create from), unless spec.clone names a TemplateCT',
    )
  }
  if (spec.ha) checkHa(kind, spec.ha, spec.state, spec.node, add)
  spec.dns = { ...(spec.dns ?? {}), hostname: spec.dns?.hostname ?? name }
  if (!HOSTNAME.test(spec.dns.hostname))
    add(
      'field-invalid',
      ['spec', 'dns', 'hostname'],
      `hostname ${JSON.stringify(spec.dns.hostname)} must be a DNS name`,
    )

  const nicSlots = new Map<string, string | number>()
  spec.networks.forEach((nic, i) => {
    const p = ['spec', 'networks', i]
    nic.slot = (nic.slot ?? `net${i}`).trim()
    checkSlot(nic.slot, /^net(\d+)$/, 31, 'netN (N 0-31)', [...p, 'slot'], nicSlots, i, 'spec.networks', add)
    if (nic.ip !== undefined && nic.ip !== 'dhcp' && nic.ip !== 'manual' && !checkCidr(nic.ip)) {
      add(
        'field-invalid',
        [...p, 'ip'],
        `ip ${JSON.stringify(nic.ip)} must be CIDR (e.g. 192.168.1.10/24), dhcp or manual`,
      )
    }
    if (nic.gw !== undefined && !isIP(nic.gw))
      add('field-invalid', [...p, 'gw'], `gw ${JSON.stringify(nic.gw)} must be an IP address`)
  })

  const mpSlots = new Map<string, string | number>()
  spec['mount-points'].forEach((mp, i) => {
    const p = ['spec', 'mount-points', i]
    mp.slot = (mp.slot ?? `mp${i}`).trim()
    checkSlot(
      mp.slot,
      /^mp(\d+)$/,
      255,
      'mpN (N 0-255)',
      [...p, 'slot'],
      mpSlots,
      `spec.mount-points[${i}]`,
      'spec.mount-points',
      add,
    )
    if (mp['mount-point'] !== undefined && !mp['mount-point'].startsWith('/')) {
      add(
        'path-not-absolute',
        [...p, 'mount-point'],
        `mount-point ${JSON.stringify(mp['mount-point'])} must be an absolute path`,
      )
    }
  })
  const offset = spec['mount-points'].length
  spec['bind-mounts'].forEach((bm, i) => {
    const p = ['spec', 'bind-mounts', i]
    bm.slot = (bm.slot ?? `mp${offset + i}`).trim()
    checkSlot(
      bm.slot,
      /^mp(\d+)$/,
      255,
      'mpN (N 0-255)',
      [...p, 'slot'],
      mpSlots,
      `spec.bind-mounts[${i}]`,
      'spec.bind-mounts',
      add,
    )
    const host = bm['host-path']
    const trimmed = host.length > 1 ? host.replace(/\/+$/, '') || '/' : host
    if (!host.startsWith('/'))
      add('bind-mount-host-path', [...p, 'host-path'], `host-path ${JSON.stringify(host)} must be an absolute path`)
    else if (SYSTEM_ROOTS.has(trimmed) || /(^|\/)\.\.(\/|$)/.test(host)) {
      add(
        'bind-mount-host-path',
        [...p, 'host-path'],
        `host-path ${JSON.stringify(host)} is a system directory (or climbs with ..): bind a dedicated data directory instead`,
      )
    }
    if (!bm['mount-point'].startsWith('/'))
      add(
        'path-not-absolute',
        [...p, 'mount-point'],
        `mount-point ${JSON.stringify(bm['mount-point'])} must be an absolute path`,
      )
  })
}

const CHECKSUM_HEX: Readonly<Record<string, number>> = { md5: 32, sha1: 40, sha256: 64, sha512: 128 }

/** `spec.id` defaults to `metadata.name`; the effective id must be one create_pool accepts */
function finalisePool(name: string, spec: Partial<PoolSpec>, add: Add): void {
  const declared = spec.id !== undefined
  const id = spec.id ?? name
  const problem = newPoolIdProblem(id)
  if (problem)
    add(
      'field-invalid',
      declared ? ['spec', 'id'] : ['metadata', 'name'],
      declared ? problem : `${problem}; set spec.id`,
    )
  spec.id = id
}

function finaliseArtifact(
  kind: 'ISO' | 'CTTemplate' | 'DiskImage',
  spec: ArtifactSpec & { node?: string; nodes?: string[] },
  add: Add,
): void {
  const nodes = spec.nodes && spec.nodes.length > 0 ? spec.nodes : spec.node !== undefined ? [spec.node] : []
  if (nodes.length === 0)
    add('field-required', ['spec'], 'missing required field "nodes" (the list of nodes the file must exist on)')
  spec.nodes = dedupe(nodes)
  delete spec.node
  const bad = checkArtifactFilename(kind, spec.filename)
  if (bad) add(bad.code, ['spec', 'filename'], bad.message)
  const c = spec.checksum as { algorithm?: string; value?: string } | undefined
  if (c) {
    if ((c.algorithm === undefined) !== (c.value === undefined)) {
      add('checksum-incomplete', ['spec', 'checksum'], 'checksum needs both algorithm and value')
    } else if (c.algorithm !== undefined && c.value !== undefined) {
      c.value = c.value.trim().toLowerCase()
      const len = CHECKSUM_HEX[c.algorithm]!
      if (!new RegExp(`^[0-9a-f]{${len}}$`).test(c.value))
        add('field-invalid', ['spec', 'checksum', 'value'], `a ${c.algorithm} checksum is ${len} hex digits`)
    } else {
      delete spec.checksum
    }
  }
}
