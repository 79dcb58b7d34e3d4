/** Minimal valid manifests of every kind, for tests. */
export const validManifests = {
  VM: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'VM',
    metadata: { name: 'app-vm' },
    spec: {
      node: 'pve1',
      vmid: 400,
      memory: '2GiB',
      cpu: { type: 'host', cores: 2 },
      disks: [{ storage: 'local-lvm', size: '32GiB' }],
      networks: [{ bridge: 'vmbr0' }],
    },
  },
  TemplateVM: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'TemplateVM',
    metadata: { name: 'alma-tpl' },
    spec: {
      node: 'pve1',
      vmid: 900,
      memory: '2GiB',
      cpu: { type: 'host', cores: 2 },
      disks: [{ storage: 'local-lvm', size: '16GiB' }],
    },
  },
  LXC: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'LXC',
    metadata: { name: 'cache-01' },
    spec: {
      node: 'pve1',
      vmid: 9000,
      template: 'debian-base',
      memory: '512MiB',
      cpu: { cores: 1 },
      root: { storage: 'local-lvm', size: '8GiB' },
      networks: [{ bridge: 'vmbr0' }],
    },
  },
  TemplateCT: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'TemplateCT',
    metadata: { name: 'debian-tpl' },
    spec: {
      node: 'pve1',
      vmid: 910,
      template: 'debian-base',
      memory: '512MiB',
      cpu: { cores: 1 },
      root: { storage: 'local-lvm', size: '4GiB' },
    },
  },
  ISO: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'ISO',
    metadata: { name: 'talos' },
    spec: {
      nodes: ['pve1'],
      storage: 'local',
      filename: 'talos.iso',
      url: 'https://downloads.example.invalid/talos.iso',
    },
  },
  CTTemplate: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'CTTemplate',
    metadata: { name: 'debian-base' },
    spec: {
      nodes: ['pve1'],
      storage: 'local',
      filename: 'debian-13.tar.zst',
      url: 'https://downloads.example.invalid/debian-13.tar.zst',
    },
  },
  DiskImage: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'DiskImage',
    metadata: { name: 'debian-13-cloud' },
    spec: {
      nodes: ['pve1'],
      storage: 'local',
      filename: 'debian-13.qcow2',
      url: 'https://downloads.example.invalid/debian-13.qcow2',
    },
  },
  BackupJob: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'BackupJob',
    metadata: { name: 'nightly' },
    spec: { schedule: 'daily', storage: 'local', selection: { vmids: [100] } },
  },
  Pool: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'Pool',
    metadata: { name: 'web' },
    spec: { comment: 'web tier' },
  },
  Role: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'Role',
    metadata: { name: 'ops-auditor' },
    spec: { privs: ['VM.Audit', 'Sys.Audit'] },
  },
  Group: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'Group',
    metadata: { name: 'ops' },
    spec: { comment: 'operators' },
  },
  User: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'User',
    metadata: { name: 'alice' },
    spec: { userid: 'alice@pve', groups: ['ops'], email: 'alice@example.invalid' },
  },
  Token: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'Token',
    metadata: { name: 'ci' },
    spec: { userid: 'alice@pve', comment: 'CI' },
  },
  ACL: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'ACL',
    metadata: { name: 'ops-audit' },
    spec: { path: '/vms', roles: ['ops-auditor'], groups: ['ops'] },
  },
  SdnController: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'SdnController',
    metadata: { name: 'evpn1' },
    spec: { asn: 65000, peers: ['10.0.0.1', '10.0.0.2'] },
  },
  Zone: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'Zone',
    metadata: { name: 'lab' },
    spec: { type: 'vlan', bridge: 'vmbr0' },
  },
  VNet: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'VNet',
    metadata: { name: 'web' },
    spec: { zone: 'lab', tag: 10 },
  },
  Subnet: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'Subnet',
    metadata: { name: 'web-v4' },
    spec: { vnet: 'web', cidr: '10.10.0.0/24', gateway: '10.10.0.1' },
  },
  ClusterOptions: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'ClusterOptions',
    metadata: { name: 'datacenter' },
    spec: { keyboard: 'de', migration: { type: 'secure', network: '10.0.0.0/24' } },
  },
  Storage: {
    apiVersion: 'proxops/v1alpha1',
    kind: 'Storage',
    metadata: { name: 'nas' },
    spec: { type: 'nfs', server: '10.0.0.5', export: '/export/pve', content: ['iso', 'images'] },
  },
} as const

/** A deep, mutable copy. */
export function clone<T>(x: T): any {
  return structuredClone(x) as any
}
