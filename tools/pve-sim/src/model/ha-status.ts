/**
 * `GET /cluster/ha/status/current` (pve-ha-manager PVE::API2::HA::Status `status`): the quorum row, the CRM master,
 * one LRM row per node and one row per service, from the manager's service states (model/ha-manager.ts) and
 * resources.cfg. The manager runs on the first node; its and the LRMs' status files are written every cycle, so
 * their timestamps are now. The fencing row and the disarm and CRS modes of newer releases are not modelled.
 */
import type { Cluster } from './cluster.js'
import type { Ha, HaResourceConf } from './ha.js'
import type { ServiceStatus } from './ha-manager.js'

/** Perl's scalar localtime (UTC on simulated nodes): `Mon Dec  7 22:00:00 2026` */
function perlLocaltime(s: number): string {
  const d = new Date(s * 1000)
  const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][d.getUTCDay()]
  const month = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getUTCMonth()]
  const time = d.toISOString().slice(11, 19)
  return `${day} ${month} ${String(d.getUTCDate()).padStart(2, ' ')} ${time} ${d.getUTCFullYear()}`
}

/** PVE::HA::Tools::get_verbose_service_state */
export function verboseServiceState(
  ss: ServiceStatus | undefined,
  sc: HaResourceConf | undefined,
  node?: string,
): string {
  if (!sc) return 'deleting'
  const req = sc.state ?? 'started'
  if (req === 'ignored') return 'ignored'
  if (node === undefined) return 'not found'
  if (!ss) return 'queued'
  const cur = ss.state
  if (cur === 'stopped') return req === 'started' ? 'starting' : req === 'disabled' ? 'disabled' : cur
  if (cur === 'started') return !ss.running ? 'starting' : req === 'stopped' || req === 'disabled' ? 'stopping' : cur
  if (cur === 'error' && req === 'disabled') return 'clearing error flag'
  return cur
}

/** PVE::HA::Tools::count_active_services: services on the node or going to it, in a state other than stopped */
function activeOn(ss: ReadonlyMap<string, ServiceStatus>, node: string): number {
  let n = 0
  for (const s of ss.values()) if ((s.node === node || s.target === node) && s.state !== 'stopped') n++
  return n
}

export function haStatusCurrent(c: Cluster, ha: Ha): Record<string, unknown>[] {
  const now = Math.floor(c.now() / 1000)
  const here = [...c.nodes.keys()][0] as string
  const quorate = c.quorate()
  const res: Record<string, unknown>[] = [
    {
      id: 'quorum',
      type: 'quorum',
      node: here,
      status: quorate ? 'OK' : `No quorum on node '${here}'!`,
      quorate: quorate ? 1 : 0,
    },
  ]
  const ss = ha.manager.ss
  const configured = [...ha.resources.keys()].sort()
  // the CRM becomes master once there is something to manage, and is idle without services
  if (configured.length > 0 || ss.size > 0) {
    const state = configured.length > 0 ? 'active' : 'idle'
    res.push({
      id: 'master',
      type: 'master',
      node: here,
      status: `${here} (${state}, ${perlLocaltime(now)})`,
      timestamp: now,
    })
    for (const node of [...c.nodes.keys()].sort()) {
      const n = c.nodes.get(node)
      const active = activeOn(ss, node)
      // an LRM that is gone writes no status: its last timestamp grows old (timestamp_to_status)
      const online = n?.online === true && n.failed === undefined
      const state = !online ? 'old timestamp - dead?' : active > 0 ? 'active' : 'idle'
      const wd = online && active > 0 ? 'watchdog active' : 'watchdog standby'
      res.push({
        id: `lrm:${node}`,
        type: 'lrm',
        node,
        status: `${node} (${state}, ${wd}, ${perlLocaltime(now)})`,
        timestamp: now,
      })
    }
  }
  const service = (sid: string): void => {
    const sc = ha.resources.get(sid)
    const s = ss.get(sid)
    const vmid = Number(sid.slice(3))
    const node = s?.node ?? c.guests.get(vmid)?.node
    const row: Record<string, unknown> = { id: `service:${sid}`, type: 'service', sid }
    if (node !== undefined) row.node = node
    if (s) row.crm_state = s.state
    row.state = verboseServiceState(s, sc, node)
    row.status = `${sid} (${node ?? '---'}, ${String(row.state)})`
    if (sc) {
      row.request_state = sc.state ?? 'started'
      for (const k of ['group', 'max_restart', 'max_relocate', 'failback', 'comment'] as const)
        if (sc[k] !== undefined) row[k] = sc[k]
    }
    res.push(row)
  }
  for (const sid of [...ss.keys()].sort()) service(sid)
  for (const sid of configured) if (!ss.has(sid)) service(sid)
  return res
}
