import type { Cluster } from '../model/cluster.js'
import { normaliseFilename } from '../model/artifacts.js'
import { remoteBytes } from '../model/control.js'
import { fail500 } from '../model/errors.js'
import { upidFields } from '../model/tasks.js'
import { str, type RouteTable } from './params.js'

/** the flags line of /proc/cpuinfo (read_cpuinfo's `hvm` looks for ` vmx ` or ` svm ` in it) */
const CPU_FLAGS =
  'fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx ' +
  'lm constant_tsc rep_good nopl cpuid pni vmx ssse3 cx16 sse4_1 sse4_2 x2apic popcnt aes xsave avx hypervisor lahf_lm'

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
        // pve-manager PVE::API2::Nodes::Nodeinfo status; the figures are synthetic, the keys and types are PVE's
        // (read_proc_uptime, read_cpuinfo, read_proc_stat, read_meminfo: regex captures stay strings)
        return {
          uptime: Math.floor((c.now() - n.bootMs) / 1000),
          idle: 0,
          cpu: 0.03,
          wait: 0,
          loadavg: ['0.12', '0.18', '0.20'],
          cpuinfo: {
            user_hz: 100,
            vendor: 'GenuineIntel',
            family: '6',
            model: 'pve-sim virtual CPU',
            mhz: '2999.998',
            cpus: n.maxcpu,
            sockets: 1,
            cores: n.maxcpu / 2,
            flags: CPU_FLAGS,
            hvm: '1',
          },
          memory: {
            total: n.maxmem,
            used: Math.floor(n.maxmem / 8),
            free: n.maxmem - Math.floor(n.maxmem / 8),
            available: n.maxmem - Math.floor(n.maxmem / 8),
          },
          ksm: { shared: 0 },
          swap: { total: 8 * 1024 ** 3, used: 0, free: 8 * 1024 ** 3 },
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
              ...upidFields(t),
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
