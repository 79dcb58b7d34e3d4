/**
 * Named string formats. apidoc.json only names them (`format: "pve-tag-list"`); the checks and their error
 * texts come from the PVE sources (pve-common JSONSchema.pm, pve-storage, qemu-server, pve-container), written
 * here from the documented behaviour. A verifier throws a `PerlDie` whose message is the `die` text including its
 * trailing newline, exactly as PVE appends it after `invalid format - `.
 *
 * `X-list` formats split the value like PVE::Tools::split_list (on `,` `;` and whitespace) and check each item
 * with `X`; `X-opt` checks only non-empty values. Formats not listed here are accepted unchecked (see
 * docs/gaps/simulator.md); `uncheckedFormat` reports them.
 */
import { isIPv4, isIPv6 } from 'node:net'
import type { SchemaProp } from './load.js'
import { verifyIcmpType, verifyProtocol } from '../model/firewall.js'
import { parseAddressList, parsePorts, verifyIpOrCidr, verifyIpOrCidrOrAlias } from '../model/fw-addr.js'
import { calendarEventError } from './calendar-event.js'

/** A Perl `die "...\n"` from a format verifier. */
export class PerlDie extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PerlDie'
  }
}

const die = (msg: string): never => {
  throw new PerlDie(`${msg}\n`)
}

export type Verifier = (value: string) => void

/** a firewall check's error as the format's `die` */
const fw = (check: () => unknown): void => {
  try {
    check()
  } catch (e) {
    die((e as Error).message)
  }
}
export type HashFormat = Record<string, SchemaProp>

// ---------------------------------------------------------------------------------------------------------
// simple verifiers (pve-common JSONSchema.pm unless noted)

const CONFIGID_RE = /^[a-z][a-z0-9_-]+$/i
const DNS_LABEL = '([a-zA-Z0-9]([a-zA-Z0-9\\-]*[a-zA-Z0-9])?)'
const DNS_NAME_RE = new RegExp(`^(${DNS_LABEL}\\.)*${DNS_LABEL}$`)
const EMAIL_RE = /^[\w+\-~]+(\.[\w+\-~]+)*@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)*$/
const EMAIL_USER_RE = /^[\w+\-~]+$/
const SIZE_RE = /^(\d+(\.\d+)?)([KMGT](?:iB)?)?$/
export const TAG_RE = /^[a-z0-9_][a-z0-9_\-+.]*$/i
const HA_NODE_RE = /^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)(:\d+)?$/
const VOLUME_ID_RE = /^([a-z][a-z0-9\-_.]*[a-z0-9]):(.+)$/i
const IPV4_MASKS = new Set(
  Array.from({ length: 33 }, (_, bits) => {
    const n = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0
    return [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.')
  }),
)

function cidr(value: string, v6: boolean): boolean {
  const m = /^(.*)\/(\d+)$/.exec(value)
  if (!m) return false
  const bits = Number(m[2])
  return (v6 ? isIPv6(m[1] as string) : isIPv4(m[1] as string)) && bits > 7 && bits <= (v6 ? 128 : 32)
}

/** PVE::JSONSchema::parse_size: bytes, or undefined when the text is not a disk size */
export function parseSize(value: string): number | undefined {
  const m = SIZE_RE.exec(value)
  if (!m) return undefined
  const unit = (m[3] ?? '').charAt(0)
  const mult = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 }[unit] ?? 1
  return Math.trunc(Number(m[1]) * mult)
}

const QEMU_DRIVE_MAX: Record<string, number> = { ide: 3, scsi: 30, virtio: 15, sata: 5 }
function isQemuDriveName(dev: string): boolean {
  if (dev === 'efidisk0' || dev === 'tpmstate0') return true
  const m = /^(ide|scsi|virtio|sata)(\d+)$/.exec(dev)
  if (!m || ((m[2] as string).length > 1 && (m[2] as string).startsWith('0'))) return false
  return Number(m[2]) <= (QEMU_DRIVE_MAX[m[1] as string] as number)
}
function indexed(dev: string, base: string, max: number): boolean {
  const m = new RegExp(`^${base}(\\d+)$`).exec(dev)
  return !!m && String(Number(m[1])) === m[1] && Number(m[1]) <= max
}

function sdnId(what: string, v: string, re: RegExp, max: number): void {
  if (!re.test(v)) die(`${what} ID '${v}' contains illegal characters`)
  if (v.length > max) die(`${what} ID '${v}' can't be more length than ${max} characters`)
}

const verifiers: Record<string, Verifier> = {
  string: () => {},
  urlencoded: (v) => {
    if (!/^[-%a-zA-Z0-9_.!~*'()]*$/.test(v)) die(`invalid urlencoded string: ${v}`)
  },
  'pve-configid': (v) => {
    if (!CONFIGID_RE.test(v)) die(`invalid configuration ID '${v}'`)
  },
  'pve-storage-id': (v) => {
    if (!/^[a-z][a-z0-9\-_.]*[a-z0-9]$/i.test(v)) die(`storage ID '${v}' contains illegal characters`)
  },
  'pve-bridge-id': (v) => {
    if (!/^[-_.\w\d]+$/.test(v)) die(`invalid bridge ID '${v}'`)
  },
  // JSONSchema verify_storagepair / verify_bridgepair: one list entry, read as a whole map (parse_idmap)
  'storage-pair': (v) => void parseIdmap(v, 'pve-storage-id'),
  'bridge-pair': (v) => void parseIdmap(v, 'pve-bridge-id'),
  'pve-vmid': (v) => {
    if (!/^[1-9][0-9]{2,8}$/.test(v)) die('value does not look like a valid VM ID')
  },
  'pve-node': (v) => {
    if (!/^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)$/.test(v)) die('value does not look like a valid node name')
  },
  // pve-ha-manager PVE::HA::Tools: pve_verify_ha_resource_id, _or_vm_id, pve_verify_ha_node (8.x: _group_node)
  'pve-ha-resource-id': (v) => {
    if (!/^[a-z]+:\S+$/.test(v)) die('value does not look like a valid ha resource id')
  },
  'pve-ha-resource-or-vm-id': (v) => {
    if (!/^([a-z]+:\S+|\d+)$/.test(v)) die('value does not look like a valid ha resource id')
  },
  'pve-ha-node': (v) => {
    if (!HA_NODE_RE.test(v)) die('value does not look like a valid ha node')
  },
  'pve-ha-group-node': (v) => {
    if (!HA_NODE_RE.test(v)) die('value does not look like a valid ha group node')
  },
  // pve-network's parse_sdn_zone_id, parse_sdn_vnet_id, parse_sdn_controller_id (the 9.1 API's id formats)
  'pve-sdn-zone-id': (v) => sdnId('zone', v, /^[a-z][a-z0-9]*[a-z0-9]$/i, 8),
  'pve-sdn-vnet-id': (v) => sdnId('vnet', v, /^[a-z][a-z0-9]*[a-z0-9]$/i, 8),
  'pve-sdn-controller-id': (v) => sdnId('controller', v, /^[a-z][a-z0-9_-]*[a-z0-9]$/i, 64),
  // SubnetPlugin parse_sdn_subnet_id: a CIDR, or an id `<zone>-<ip>-<mask>` standing for one
  'pve-sdn-subnet-id': (v) => {
    const c = v.includes('/') ? v : v.split('-').slice(1, 3).join('/')
    if (!cidr(c, false) && !cidr(c, true)) die('value does not look like a valid CIDR network')
  },
  'mac-addr': (v) => {
    if (!/^[a-f0-9][02468ace](?::[a-f0-9]{2}){5}$/i.test(v)) die('value does not look like a valid unicast MAC address')
  },
  ipv4: (v) => {
    if (!isIPv4(v)) die('value does not look like a valid IPv4 address')
  },
  ipv6: (v) => {
    if (!isIPv6(v)) die('value does not look like a valid IPv6 address')
  },
  ip: (v) => {
    if (!isIPv4(v) && !isIPv6(v)) die('value does not look like a valid IP address')
  },
  ipv4mask: (v) => {
    if (!IPV4_MASKS.has(v)) die('value does not look like a valid IP netmask')
  },
  CIDRv4: (v) => {
    if (!cidr(v, false)) die('value does not look like a valid IPv4 CIDR network')
  },
  CIDRv6: (v) => {
    if (!cidr(v, true)) die('value does not look like a valid IPv6 CIDR network')
  },
  CIDR: (v) => {
    if (!cidr(v, false) && !cidr(v, true)) die('value does not look like a valid CIDR network')
  },
  'pve-ipv4-config': (v) => {
    if (!/^(?:dhcp|manual)$/.test(v) && !cidr(v, false))
      die('value does not look like a valid ipv4 network configuration')
  },
  'pve-ipv6-config': (v) => {
    if (!/^(?:auto|dhcp|manual)$/.test(v) && !cidr(v, true))
      die('value does not look like a valid ipv6 network configuration')
  },
  email: (v) => {
    if (!EMAIL_RE.test(v)) die('value does not look like a valid email address')
  },
  'email-or-username': (v) => {
    if (!EMAIL_RE.test(v) && !EMAIL_USER_RE.test(v)) die('value does not look like a valid email address or user name')
  },
  'dns-name': (v) => {
    if (!DNS_NAME_RE.test(v)) die('value does not look like a valid DNS name')
  },
  // pve-firewall PVE::Firewall: pve_fw_verify_addr_spec, _dport_spec, _sport_spec, _protocol_spec,
  // _icmp_type_spec; pve_verify_ip_or_cidr(_or_alias) for IPorCIDR / IPorCIDRorAlias
  'pve-fw-addr-spec': (v) => fw(() => parseAddressList(v)),
  'pve-fw-dport-spec': (v) => fw(() => parsePorts(v, true)),
  'pve-fw-sport-spec': (v) => fw(() => parsePorts(v, false)),
  'pve-fw-protocol-spec': (v) => fw(() => verifyProtocol(v)),
  'pve-fw-icmp-type-spec': (v) => fw(() => verifyIcmpType(v)),
  IPorCIDR: (v) => fw(() => verifyIpOrCidr(v)),
  IPorCIDRorAlias: (v) => fw(() => verifyIpOrCidrOrAlias(v)),
  'pve-iface': (v) => {
    if (!/^[a-z][a-z0-9_]{1,20}([:.]\d+)?$/i.test(v)) die(`invalid network interface name '${v}'`)
  },
  address: (v) => {
    if (!isIPv4(v) && !isIPv6(v) && !DNS_NAME_RE.test(v)) die(`value does not look like a valid address: ${v}`)
  },
  'disk-size': (v) => {
    if (parseSize(v) === undefined) die(`value does not look like a valid disk size: ${v}`)
  },
  'pve-startup-order': (v) => {
    const parts = v.split(',').filter((p) => !/^\s*$/.test(p))
    if (!v || !parts.every((p) => /^(order=)?\d+$|^up=\d+$|^down=\d+$/.test(p))) die('unable to parse startup options')
  },
  'pve-tag': (v) => {
    if (!TAG_RE.test(v)) die('invalid characters in tag')
  },
  'pve-task-status-type': (v) => {
    if (!/^(ok|error|warning|unknown)$/i.test(v)) die(`invalid status '${v}'`)
  },
  // pve-storage Plugin.pm parse_volume_id
  'pve-volume-id': (v) => {
    if (!VOLUME_ID_RE.test(v)) die(`unable to parse volume ID '${v}'`)
  },
  'pve-storage-content': (v) => {
    if (!['images', 'rootdir', 'vztmpl', 'iso', 'backup', 'snippets', 'import', 'none'].includes(v))
      die(`invalid content type '${v}'`)
  },
  // qemu-server QemuServer.pm
  'pve-volume-id-or-absolute-path': (v) => {
    if (v.startsWith('/')) return
    verifiers['pve-volume-id']?.(v)
  },
  'pve-volume-id-or-qm-path': (v) => {
    if (v === 'none' || v === 'cdrom' || v.startsWith('/')) return
    verifiers['pve-volume-id']?.(v)
  },
  'pve-qm-bootdisk': (v) => {
    if (!isQemuDriveName(v)) die(`invalid boot disk '${v}'`)
  },
  'pve-qm-bootdev': (v) => {
    const special = v.startsWith('efidisk') || v.startsWith('tpmstate')
    if (isQemuDriveName(v) && !special) return
    if (indexed(v, 'net', 31) || indexed(v, 'usb', 13) || indexed(v, 'hostpci', 15)) return
    die(`invalid boot device '${v}'`)
  },
  'pve-hotplug-features': (v) => {
    if (v === '0' || v === '1') return
    for (const f of splitList(v))
      if (!/^(network|disk|cpu|memory|usb|cloudinit)$/.test(f)) die(`invalid hotplug feature '${f}'`)
  },
  'pve-phys-bits': (v) => {
    if (!/^(host|\d{1,2})$/.test(v) || (/^\d+$/.test(v) && (Number(v) < 8 || Number(v) > 64))) {
      die("value must be an integer between 8 and 64 or 'host'")
    }
  },
  // pve-container
  'pve-lxc-mp-string': (v) => {
    if (/\/\.\.?\//.test(v) || /\/\.\.?$/.test(v) || /^\.\.\//.test(v)) die(`${v} contains illegal character sequences`)
  },
  'pve-ct-timezone': (v) => {
    if (v === 'host' || v === 'UTC') return
    if (!/^[A-Za-z]+(?:\/[A-Za-z0-9_+-]+)+$/.test(v)) die(`invalid time zone '${v}'`)
  },
  // pve-access-control
  'pve-poolid': (v) => {
    if (v.split('/').length > 3) die(`pool name '${v}' nested too deeply (max levels = 3)`)
    if (!/^[A-Za-z0-9.\-_]+(?:\/[A-Za-z0-9.\-_]+){0,2}$/.test(v)) die(`pool name '${v}' contains invalid characters`)
  },
  'pve-userid': (v) => {
    if (v.length < 3) die(`user name '${v}' is too short`)
    if (v.length > 64) die(`user name '${v}' is too long (${v.length} > 64)`)
    if (!/^[^\s:/]+@[A-Za-z][A-Za-z0-9.\-_]+$/.test(v)) die(`value '${v}' does not look like a valid user name`)
  },
  'pve-groupid': (v) => {
    if (!/^[A-Za-z0-9.\-_]+$/.test(v)) die(`group name '${v}' contains invalid characters`)
  },
  // pve-guest-common PVE::ReplicationConfig parse_replication_job_id
  'pve-replication-job-id': (v) => {
    const m = /^(\d+)-(\d+)$/.exec(v)
    if (!m) die(`invalid replication job id '${v}'`)
    else if (Number(m[1]) < 100) die(`invalid replication job id '${v}' (guest IDs < 100 are reserved)`)
  },
  'pve-calendar-event': (v) => {
    const err = calendarEventError(v)
    if (err !== null) die(`invalid calendar event '${v}' - ${err}`)
  },
  'pve-realm': (v) => {
    if (!/^[A-Za-z][A-Za-z0-9.\-_]+$/.test(v)) die('value does not look like a valid realm')
  },
}

// ---------------------------------------------------------------------------------------------------------
// hash formats that apidoc.json names without expanding (qemu-server)

const opt = (p: SchemaProp): SchemaProp => ({ optional: 1, ...p })
const B64 = '[A-Za-z0-9+\\/]+={0,2}'

const hashFormats: Record<string, HashFormat> = {
  'pve-qm-ipconfig': {
    ip: opt({ type: 'string', format: 'pve-ipv4-config' }),
    gw: opt({ type: 'string', format: 'ipv4', requires: 'ip' }),
    ip6: opt({ type: 'string', format: 'pve-ipv6-config' }),
    gw6: opt({ type: 'string', format: 'ipv6', requires: 'ip6' }),
  },
  'pve-qm-boot': {
    legacy: opt({ type: 'string', default_key: 1, pattern: '[acdn]{1,4}' }),
    order: opt({ type: 'string', format: 'pve-qm-bootdev-list' }),
  },
  'pve-qm-cicustom': {
    meta: opt({ type: 'string', format: 'pve-volume-id' }),
    network: opt({ type: 'string', format: 'pve-volume-id' }),
    user: opt({ type: 'string', format: 'pve-volume-id' }),
    vendor: opt({ type: 'string', format: 'pve-volume-id' }),
  },
  'pve-qm-smbios1': {
    uuid: opt({ type: 'string', pattern: '[a-fA-F0-9]{8}(?:-[a-fA-F0-9]{4}){3}-[a-fA-F0-9]{12}' }),
    version: opt({ type: 'string', pattern: B64 }),
    serial: opt({ type: 'string', pattern: B64 }),
    manufacturer: opt({ type: 'string', pattern: B64 }),
    product: opt({ type: 'string', pattern: B64 }),
    sku: opt({ type: 'string', pattern: B64 }),
    family: opt({ type: 'string', pattern: B64 }),
    base64: opt({ type: 'boolean' }),
  },
  'pve-qm-watchdog': {
    model: opt({ type: 'string', default_key: 1, enum: ['i6300esb', 'ib700'] }),
    action: opt({ type: 'string', enum: ['reset', 'shutdown', 'poweroff', 'pause', 'debug', 'none'] }),
  },
  'pve-vm-cpu-conf': {
    cputype: opt({ type: 'string', default_key: 1 }),
    'reported-model': opt({ type: 'string' }),
    hidden: opt({ type: 'boolean' }),
    'hv-vendor-id': opt({ type: 'string', pattern: '[a-zA-Z0-9]{1,12}' }),
    flags: opt({ type: 'string', pattern: '[+-]?[a-zA-Z0-9\\-_.]+(;[+-]?[a-zA-Z0-9\\-_.]+)*' }),
    'guest-phys-bits': opt({ type: 'integer', minimum: 32, maximum: 64 }),
    'phys-bits': opt({ type: 'string', format: 'pve-phys-bits' }),
    level: opt({ type: 'integer', minimum: 0, maximum: 4294967295 }),
  },
}

/** pve-storage's prune-backups format (PVE::Storage::Plugin $prune_backups_format) */
const keep = (): SchemaProp => opt({ type: 'integer', minimum: 0 })
export const PRUNE_BACKUPS_FORMAT: HashFormat = {
  'keep-all': opt({ type: 'boolean' }),
  'keep-last': keep(),
  'keep-hourly': keep(),
  'keep-daily': keep(),
  'keep-weekly': keep(),
  'keep-monthly': keep(),
  'keep-yearly': keep(),
}
hashFormats['prune-backups'] = PRUNE_BACKUPS_FORMAT

/** pve-manager PVE::VZDump::Common's `backup-fleecing` format */
export const BACKUP_FLEECING_FORMAT: HashFormat = {
  enabled: opt({ type: 'boolean', default_key: 1 }),
  storage: opt({ type: 'string', format: 'pve-storage-id' }),
}
hashFormats['backup-fleecing'] = BACKUP_FLEECING_FORMAT

/** pve-manager PVE::VZDump::Common's `backup-performance` format */
export const BACKUP_PERFORMANCE_FORMAT: HashFormat = {
  'max-workers': opt({ type: 'integer', minimum: 1, maximum: 256 }),
  'pbs-entries-max': opt({ type: 'integer', minimum: 1 }),
}
hashFormats['backup-performance'] = BACKUP_PERFORMANCE_FORMAT

/**
 * validate_prune_backups (pve-storage), the validator parse_property_string runs on the parsed hash: keep-all
 * with any positive keep-N dies; nothing positive means keep-all=1. Returns the normalised hash.
 */
export function validatePruneBackups(res: Record<string, string>): Record<string, string> {
  const { 'keep-all': keepAll, ...rest } = res
  if (!Object.values(rest).some((v) => Number(v) > 0)) return { 'keep-all': '1' }
  if (keepAll !== undefined && Number(keepAll) !== 0) die('keep-all cannot be set together with other options.')
  return rest
}

/** validators attached to named hash formats (register_format's third argument) */
export const HASH_VALIDATORS = new Map<HashFormat, (res: Record<string, string>) => Record<string, string>>([
  [PRUNE_BACKUPS_FORMAT, validatePruneBackups],
])

/** PVE::JSONSchema::parse_idmap: a `source:target` list with an optional default target, or `1` (identity) */
export interface IdMap {
  identity?: true
  default?: string
  entries: Map<string, string>
}

/** parse_idmap: each id checked with `format`; dies (PerlDie) with PVE's messages */
export function parseIdmap(text: string, format: 'pve-storage-id' | 'pve-bridge-id'): IdMap | undefined {
  if (!text) return undefined
  const verify = verifiers[format] as Verifier
  const checked = (entry: string, ids: string[]) => {
    try {
      for (const id of ids) verify(id)
    } catch (e) {
      if (e instanceof PerlDie) die(`entry '${entry}' contains invalid ID - ${e.message}`)
      throw e
    }
  }
  const map: IdMap = { entries: new Map() }
  for (const entry of splitList(text)) {
    const pair = /^([^:]+):([^:]+)$/.exec(entry)
    if (entry === '1') map.identity = true
    else if (pair) {
      const [, source, target] = pair as unknown as [string, string, string]
      checked(entry, [source, target])
      if (map.entries.has(source)) die(`duplicate mapping for source '${source}'`)
      map.entries.set(source, target)
    } else {
      checked(entry, [entry])
      if (map.default !== undefined) die('default target ID can only be provided once')
      map.default = entry
    }
  }
  if (map.identity && (map.default !== undefined || map.entries.size > 0))
    die('identity mapping cannot be combined with other mappings')
  return map
}

/** PVE::JSONSchema::map_id: the entry for `source`, else the default, else `source` itself */
export function mapId(map: IdMap | undefined, source: string): string {
  return map?.entries.get(source) ?? map?.default ?? source
}

/** PVE::Tools::split_list */
export function splitList(text: string): string[] {
  if (text.includes('\0')) return text.split('\0')
  return text
    .replace(/[,;]/g, ' ')
    .split(/\s+/)
    .filter((x) => x !== '')
}

export type ResolvedFormat =
  { kind: 'code'; verify: Verifier } | { kind: 'hash'; format: HashFormat } | { kind: 'unknown'; name: string }

/** Resolves a named format as check_format does: `name`, `name-list`, `name-opt`. */
export function resolveFormat(name: string): ResolvedFormat {
  if (name === 'regex') return { kind: 'code', verify: () => {} }
  const m = /^(.*?)(?:-(list|opt))?$/.exec(name) as RegExpExecArray
  const base = m[1] as string
  const kind = m[2]
  const hash = hashFormats[base]
  if (hash && !kind) return { kind: 'hash', format: hash }
  const v = verifiers[base]
  if (!v) return { kind: 'unknown', name }
  if (kind === 'list') return { kind: 'code', verify: (value) => splitList(value).forEach(v) }
  if (kind === 'opt') return { kind: 'code', verify: (value) => (value ? v(value) : undefined) }
  return { kind: 'code', verify: v }
}

export function uncheckedFormat(name: string): boolean {
  return resolveFormat(name).kind === 'unknown'
}
