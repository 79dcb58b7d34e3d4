import { WireError, excerpt } from './errors.js'

/**
 * UPIDs (pve-common `PVE/UPID.pm`): `UPID:<node>:<pid 8 hex>:<pstart 8-9 hex>:<starttime 8 hex>:<type>:<id>:<user>:`.
 */

const UPID_RE =
  /^UPID:([a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s/]+):([^:\s/]*):([^:\s/]+):$/

export interface Upid {
  node: string
  pid: number
  pstart: number
  /** Unix seconds */
  starttime: number
  type: string
  /** vmid for guest tasks, encoded filename for downloads, may be empty */
  id: string
  /** `root@pam` or a token id `root@pam!gitops` */
  user: string
}

export function isUpid(value: unknown): value is string {
  return typeof value === 'string' && UPID_RE.test(value)
}

export function parseUpid(value: string, field = 'upid'): Upid {
  const m = typeof value === 'string' ? UPID_RE.exec(value) : null
  if (!m)
    throw new WireError(
      'WIRE_UPID',
      `unable to parse worker upid ${typeof value === 'string' ? excerpt(value, 80) : ''}`.trim(),
      field,
    )
  return {
    node: m[1] as string,
    pid: parseInt(m[2] as string, 16),
    pstart: parseInt(m[3] as string, 16),
    starttime: parseInt(m[4] as string, 16),
    type: m[5] as string,
    id: m[6] as string,
    user: m[7] as string,
  }
}

export function formatUpid(upid: Upid, field = 'upid'): string {
  if (upid === null || typeof upid !== 'object') throw new WireError('WIRE_UPID', 'expected UPID fields', field)
  for (const k of ['node', 'type', 'id', 'user'] as const) {
    if (typeof upid[k] !== 'string') throw new WireError('WIRE_UPID', `field '${k}' must be a string`, field)
  }
  const hex = (n: number, width: number, max: number) => {
    if (!Number.isInteger(n) || n < 0 || n > max)
      throw new WireError('WIRE_UPID', `number out of range for UPID`, field)
    return n.toString(16).toUpperCase().padStart(width, '0')
  }
  const s = `UPID:${upid.node}:${hex(upid.pid, 8, 0xffffffff)}:${hex(upid.pstart, 8, 0xfffffffff)}:${hex(upid.starttime, 8, 0xffffffff)}:${upid.type}:${upid.id}:${upid.user}:`
  if (!UPID_RE.test(s)) throw new WireError('WIRE_UPID', 'fields do not form a valid UPID', field)
  return s
}
