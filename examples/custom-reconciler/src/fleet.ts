/**
 * The desired state of this example, written in code instead of a GitOps repository: a number of identical
 * web VMs spread over the nodes, plus one container from a CT template. Each document goes through
 * @proxops/schema's parser (`manifest()` of @proxops/planner/testing), so code-built manifests obey exactly the
 * rules YAML ones do, and an invalid one throws naming each field.
 */
import type { Manifest } from '@proxops/schema'
import { manifest } from '@proxops/planner/testing'

export interface FleetOptions {
  /** how many web VMs (vmids 500, 501, ...) */
  web: number
  nodes: readonly string[]
  /** memory of each web VM, e.g. `1GiB` */
  memory?: string
  /** add the cache container (vmid 600) on the first node */
  cache?: boolean
}

export function fleet(options: FleetOptions): Manifest[] {
  const docs: Record<string, unknown>[] = []
  for (let i = 0; i < options.web; i++) {
    docs.push({
      kind: 'VM',
      metadata: { name: `web-${i + 1}` },
      spec: {
        node: options.nodes[i % options.nodes.length],
        vmid: 500 + i,
        memory: options.memory ?? '1GiB',
        cpu: { type: 'host', cores: 2 },
        disks: [{ storage: 'local-lvm', size: '8GiB', iothread: true, controller: 'virtio-scsi-single' }],
        networks: [{ bridge: 'vmbr0', firewall: true }],
        tags: ['web', 'fleet'],
      },
    })
  }
  if (options.cache) {
    docs.push({
      kind: 'CTTemplate',
      metadata: { name: 'debian-12' },
      spec: {
        nodes: [options.nodes[0]],
        storage: 'local',
        filename: 'debian-12-standard_12.7-1_amd64.tar.zst',
        url: 'https://images.example/debian-12-standard_12.7-1_amd64.tar.zst',
      },
    })
    docs.push({
      kind: 'LXC',
      metadata: { name: 'cache' },
      spec: {
        node: options.nodes[0],
        vmid: 600,
        template: 'debian-12',
        memory: '512MiB',
        cpu: { cores: 1 },
        root: { storage: 'local-lvm', size: '4GiB' },
        networks: [{ bridge: 'vmbr0', ip: 'dhcp' }],
        tags: ['fleet'],
      },
    })
  }
  return docs.map((doc) => manifest(doc))
}
