/**
 * DNS rebinding: a web page whose name is made to resolve to 127.0.0.1 may call the daemon from any browser on the
 * host, and its requests carry that page's name as `Host`. The daemon answers only a `Host` it knows: its listen
 * address, `localhost`, or a name of `allowed-hosts` (docs/configuration.md). The port is not compared (a reverse
 * proxy may listen on another one). A request without `Host` is not a browser's and passes.
 */
import { isIP } from 'node:net'

/** Whether a `Host` header names this daemon. `listenHost` as configured; `allowed` from `allowed-hosts`. */
export function knownHost(header: string | undefined, listenHost: string, allowed: readonly string[]): boolean {
  if (header === undefined) return true
  const host = hostOf(header)
  if (host === undefined) return false
  const listen = canonical(listenHost)
  if (host === 'localhost' || host === listen || allowed.some((name) => canonical(name) === host)) return true
  // bound to every address: each of the host's addresses is the listen address, and an address cannot be rebound
  return WILDCARDS.has(listen) && isIP(host) !== 0
}

const WILDCARDS = new Set(['0.0.0.0', '::', '::0'])

/** `name`, `name:port`, `[v6]` or `[v6]:port` to the bare lower-case name; undefined when it is none of those. */
function hostOf(header: string): string | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+))(?::\d{1,5})?$/.exec(header.trim())
  if (!match) return undefined
  return canonical(match[1] ?? match[2] ?? '')
}

function canonical(name: string): string {
  return name.toLowerCase().replace(/\.$/, '')
}
