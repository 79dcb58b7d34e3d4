/**
 * A seeded estate generator: writes a ProxOps repository (one cluster, N guest manifests) that the
 * benchmarks load, diff and apply against the simulator. Same seed, same files, byte for byte.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'

/** xorshift32: small, fast and deterministic; benchmarks need repeatability, not quality randomness. */
export function rng(seed: number): () => number {
  let x = seed >>> 0 || 0x9e3779b9
  return () => {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    return x / 0x100000000
  }
}

export interface EstateOptions {
  seed: number
  guests: number
  nodes: string[]
  /** first vmid (default 2000, clear of the simulator's preloaded estate at 1000+) */
  firstVmid?: number
  /** power state of every guest (default stopped: the apply scenario measures creates, not boots) */
  state?: 'started' | 'stopped'
  /** one guest in `lxcEvery` is an LXC container (0 = VMs only) */
  lxcEvery?: number
}

export interface ClusterEndpoint {
  baseUrl: string
  fingerprint?: string
}

export interface GeneratedRepo {
  root: string
  cluster: string
  files: number
}

/** Writes the repository under `root` (which must exist and be empty) and `git init`s nothing: callers do. */
export function writeEstateRepo(root: string, endpoint: ClusterEndpoint, o: EstateOptions): GeneratedRepo {
  const next = rng(o.seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T
  const cluster = 'bench'
  const first = o.firstVmid ?? 2000
  const state = o.state ?? 'stopped'
  const files: string[] = []
  /** one manifest of the repository, listed in `files` */
  const put = (rel: string, text: string): void => {
    writeFileSync(join(root, rel), text)
    files.push(rel)
  }
  mkdirSync(join(root, 'vm', cluster), { recursive: true })
  mkdirSync(join(root, 'lxc', cluster), { recursive: true })
  mkdirSync(join(root, 'ctt', cluster), { recursive: true })
  mkdirSync(join(root, 'clusters', cluster), { recursive: true })
  const ctt = `ctt/${cluster}/debian.yaml`
  put(
    ctt,
    doc('CTTemplate', 'debian-12-standard', {
      nodes: o.nodes,
      storage: 'local',
      url: 'https://downloads.example.invalid/debian-12-standard_12.7-1_amd64.tar.zst',
      filename: 'debian-12-standard_12.7-1_amd64.tar.zst',
    }),
  )
  for (let i = 0; i < o.guests; i++) {
    const vmid = first + i
    const node = o.nodes[i % o.nodes.length] as string
    const lxc = o.lxcEvery !== undefined && o.lxcEvery > 0 && i % o.lxcEvery === o.lxcEvery - 1
    const tags = [pick(['web', 'db', 'cache', 'batch'])]
    if (lxc) {
      const name = `ct-${vmid}`
      const rel = `lxc/${cluster}/${name}.yaml`
      put(
        rel,
        doc('LXC', name, {
          node,
          vmid,
          state,
          template: 'debian-12-standard',
          memory: `${512 * (1 + Math.floor(next() * 4))}MiB`,
          cpu: { cores: 1 + Math.floor(next() * 2) },
          root: { storage: 'local-lvm', size: `${4 * (1 + Math.floor(next() * 4))}GiB` },
          networks: [{ bridge: 'vmbr0', iface: 'eth0', ip: 'dhcp' }],
          tags,
        }),
      )
    } else {
      const name = `vm-${vmid}`
      const rel = `vm/${cluster}/${name}.yaml`
      put(
        rel,
        doc('VM', name, {
          node,
          vmid,
          state,
          memory: `${1024 * (1 + Math.floor(next() * 4))}MiB`,
          cpu: { type: 'x86-64-v2-AES', cores: 1 + Math.floor(next() * 4) },
          disks: [{ storage: 'local-lvm', size: `${8 * (1 + Math.floor(next() * 4))}GiB`, iothread: true }],
          networks: [{ bridge: 'vmbr0' }],
          tags,
        }),
      )
    }
  }
  const cfg = [
    `pve:`,
    `  clusters:`,
    `    ${cluster}:`,
    `      base-url: ${endpoint.baseUrl}`,
    `      nodes: [${o.nodes.join(', ')}]`,
    ...(endpoint.fingerprint ? [`      tls:\n        fingerprint: "${endpoint.fingerprint}"`] : []),
    '',
  ].join('\n')
  writeFileSync(join(root, 'clusters', cluster, 'config.yaml'), cfg)
  writeFileSync(
    join(root, 'clusters', cluster, 'resources.yaml'),
    `resources:\n${files.map((f) => `  - ../../${f}`).join('\n')}\n`,
  )
  return { root, cluster, files: files.length }
}

function doc(kind: string, name: string, spec: Record<string, unknown>): string {
  return stringify({ apiVersion: 'proxops/v1alpha1', kind, metadata: { name }, spec })
}
