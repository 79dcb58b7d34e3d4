/**
 * One PVE cluster under two names. Two cluster entries that reach the same PVE would each prune the
 * other's guests, so an entry is identified by what PVE says it is, never by the spelling of its URL:
 * - offline: every entry's host is resolved; two entries reaching one address and port are refused;
 * - online: `/cluster/status` (PVE::API2::ClusterConfig's status, built from corosync's cluster name and
 *   the member nodes) is read for every selected entry before any cycle plans; two entries that answer the
 *   same cluster are both aborted. See docs/safety.md.
 */
import { lookup } from 'node:dns/promises'
import { CliError } from '../errors.js'

export interface ClusterIdentity {
  /** comparable: equal keys = the same PVE cluster */
  key: string
  /** for messages */
  text: string
}

/**
 * The identity in a `/cluster/status` answer: the corosync cluster name and its nodes (name and node id),
 * or for a node that is in no cluster, that node's name and address. Throws on an answer without nodes.
 */
export function identityFromStatus(data: unknown): ClusterIdentity {
  const entries = Array.isArray(data)
    ? (data as unknown[]).filter((e): e is Record<string, unknown> => e !== null && typeof e === 'object')
    : []
  const cluster = entries.find((e) => e.type === 'cluster' && typeof e.name === 'string')
  const nodes = entries
    .filter((e) => e.type === 'node' && typeof e.name === 'string')
    .map((e) => ({
      name: String(e.name),
      id: e.nodeid === undefined ? '' : String(e.nodeid),
      ip: typeof e.ip === 'string' ? e.ip : '',
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  if (nodes.length === 0) throw new Error('GET /cluster/status lists no nodes')
  if (cluster) {
    const name = String(cluster.name)
    return {
      key: JSON.stringify(['cluster', name, nodes.map((n) => [n.name, n.id])]),
      text: `PVE cluster "${name}" (nodes ${nodes.map((n) => n.name).join(', ')})`,
    }
  }
  return {
    key: JSON.stringify(['nodes', nodes.map((n) => [n.name, n.ip])]),
    text: `PVE node ${nodes.map((n) => `${n.name} (${n.ip || 'no address'})`).join(', ')}`,
  }
}

/** Pairs of names whose keys are equal, each pair once, in name order. */
export function twins<T>(
  entries: ReadonlyArray<{ name: string; key: T }>,
  same: (a: T, b: T) => boolean,
): Array<[string, string]> {
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const out: Array<[string, string]> = []
  sorted.forEach((a, i) => {
    for (const b of sorted.slice(i + 1)) if (same(a.key, b.key)) out.push([a.name, b.name])
  })
  return out
}

/** The `address:port` pairs a base URL reaches (the host resolved; unresolvable = none). */
export async function endpointAddresses(baseUrl: string): Promise<string[]> {
  const url = new URL(baseUrl)
  const port = url.port || (url.protocol === 'https:' ? '443' : '80')
  const host = url.hostname.replace(/^\[|\]$/g, '')
  try {
    const found = await lookup(host, { all: true, verbatim: true })
    return [...new Set(found.map((a) => `${unmapIpv4(a.address)}:${port}`))].sort()
  } catch {
    return []
  }
}

/** An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `::ffff:7f00:1`) as the IPv4 address it is. */
function unmapIpv4(address: string): string {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (dotted) return dotted[1] as string
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address)
  if (!hex) return address
  const [hi, lo] = [parseInt(hex[1] as string, 16), parseInt(hex[2] as string, 16)]
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

/** Refuses two configured entries (selected or not) whose endpoints resolve to a common address and port. */
export async function checkEndpointTwins(
  clusters: ReadonlyArray<{ name: string; baseUrl: string; file: string }>,
): Promise<void> {
  if (clusters.length < 2) return
  const resolved = await Promise.all(
    clusters.map(async (c) => ({ name: c.name, key: await endpointAddresses(c.baseUrl) })),
  )
  const pair = twins(resolved, (a, b) => a.some((x) => b.includes(x)))[0]
  if (!pair) return
  const [a, b] = pair
  const file = clusters.find((c) => c.name === b)?.file ?? ''
  const urls = (n: string) => clusters.find((c) => c.name === n)?.baseUrl
  throw new CliError(
    'CLUSTER_TWIN',
    `${file}: pve.clusters.${b}.base-url: ${urls(b)} reaches the same address as cluster "${a}" (${urls(a)}); one PVE cluster under two names would prune its own guests: keep one entry`,
  )
}

/**
 * Reads every selected entry's identity (only when two or more are selected). Returns, per cluster name, why
 * its cycle must not run: it is the same PVE cluster as another entry, or its identity cannot be read.
 */
export async function clusterTwins(
  clusters: ReadonlyArray<{ name: string }>,
  readStatus: (cluster: string) => Promise<unknown>,
): Promise<Map<string, string>> {
  const blocked = new Map<string, string>()
  if (clusters.length < 2) return blocked
  const known: Array<{ name: string; key: ClusterIdentity }> = []
  // every entry read at once (one round trip, not one per entry); the results are taken in the entries' order
  const read = await Promise.allSettled(clusters.map(async (c) => identityFromStatus(await readStatus(c.name))))
  clusters.forEach((c, i) => {
    const r = read[i] as PromiseSettledResult<ClusterIdentity>
    if (r.status === 'fulfilled') known.push({ name: c.name, key: r.value })
    else
      blocked.set(
        c.name,
        `cannot tell which PVE cluster this is (GET /cluster/status: ${(r.reason as Error).message}); not reconciled beside other clusters`,
      )
  })
  for (const [a, b] of twins(known, (x, y) => x.key === y.key)) {
    const text = known.find((k) => k.name === a)?.key.text ?? ''
    blocked.set(
      a,
      `clusters "${a}" and "${b}" are the same ${text}; one PVE cluster under two names would prune its own guests: keep one entry`,
    )
    blocked.set(b, blocked.get(a) as string)
  }
  return blocked
}
