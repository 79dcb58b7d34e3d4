import type { Cluster } from '../model/cluster.js'
import { normaliseFilename } from '../model/artifacts.js'
import { remoteBytes } from '../model/control.js'
import { fail500 } from '../model/errors.js'
import { str, type RouteTable } from './routes.js'

/** node-level reads: /nodes/{node}, /status, /dns, /query-url-metadata, and /cluster/tasks */
export function nodeRoutes(c: Cluster): RouteTable {
  return [
    [
      'GET',
      '/nodes/{node}',
      (ctx) => {
        c.requireNode(str(ctx, 'node') ?? '')
        return ['qemu', 'lxc', 'storage', 'tasks', 'status', 'dns', 'query-url-metadata', 'version'].map((name) => ({
          name,
        }))
      },
    ],
    [
      'GET',
      '/nodes/{node}/status',
      (ctx) => {
        const n = c.requireNode(str(ctx, 'node') ?? '')
        const v = c.version
        const kernel = c.pveVersion === '9.1' ? '6.17.2-1-pve' : '6.8.12-9-pve'
        return {
          uptime: Math.floor((c.now() - n.bootMs) / 1000),
          cpu: 0.03,
          loadavg: ['0.12', '0.18', '0.20'],
          cpuinfo: { cpus: n.maxcpu, cores: n.maxcpu / 2, sockets: 1, model: 'pve-sim virtual CPU' },
          memory: {
            total: n.maxmem,
            used: Math.floor(n.maxmem / 8),
            free: n.maxmem - Math.floor(n.maxmem / 8),
            available: n.maxmem - Math.floor(n.maxmem / 8),
          },
          rootfs: { total: 100 * 1024 ** 3, used: 10 * 1024 ** 3, free: 90 * 1024 ** 3, avail: 90 * 1024 ** 3 },
          pveversion: `pve-manager/${v.version}/${v.repoid}`,
          kversion: `Linux ${kernel} #1 SMP PREEMPT_DYNAMIC PMX ${kernel}`,
          'current-kernel': {
            sysname: 'Linux',
            release: kernel,
            version: `#1 SMP PREEMPT_DYNAMIC PMX ${kernel}`,
            machine: 'x86_64',
          },
          'boot-info': { mode: 'efi', secureboot: 0 },
        }
      },
    ],
    [
      'GET',
      '/nodes/{node}/dns',
      (ctx) => {
        c.requireNode(str(ctx, 'node') ?? '')
        return { search: 'sim.lan', dns1: '10.0.0.1' }
      },
    ],
    [
      'GET',
      '/nodes/{node}/query-url-metadata',
      (ctx) => {
        c.requireNode(str(ctx, 'node') ?? '')
        const url = str(ctx, 'url') ?? ''
        const bytes = remoteBytes(c, url)
        if (!Buffer.isBuffer(bytes)) throw fail500(`invalid server response: '${bytes.error}'`)
        const filename = normaliseFilename(new URL(url).pathname)
        return { filename, size: c.remoteSizes.get(url) ?? bytes.length, mimetype: 'application/octet-stream' }
      },
    ],
    [
      'GET',
      '/cluster/tasks',
      () =>
        c.tasks
          .all()
          .slice(-100)
          .reverse()
          .map((t) => {
            const item: Record<string, unknown> = {
              upid: t.upid,
              node: t.node,
              pid: t.pid,
              pstart: t.pstart,
              starttime: t.starttime,
              type: t.type,
              id: t.id,
              user: t.tokenid ? `${t.user}!${t.tokenid}` : t.user,
            }
            if (t.status === 'stopped') {
              item.endtime = t.endtime
              item.status = t.exitstatus
            }
            return item
          }),
    ],
  ]
}
