/**
 * Problems found in a repository: each carries a stable code, the file (relative to the repository root, `/`
 * separated), a 1-based line and column when known, and a message a person can act on.
 */

/** Every code the schema package reports. Codes are stable: tools and tests may match on them. */
export const ErrorCodes = {
  // discovery and files
  'repo-not-found': 'no ProxOps GitOps repository (.git ancestor) found from the start directory',
  'root-invalid': 'the given repository root is not a readable directory',
  'file-unreadable': 'a file could not be read',
  'file-too-large': 'a YAML file exceeds the per-file size limit',
  'path-outside-root': 'a path resolves (possibly through a symlink) outside the repository root',
  // YAML
  'yaml-syntax': 'the file is not well-formed YAML',
  'yaml-duplicate-key': 'a mapping repeats a key',
  'yaml-alias-limit': 'YAML aliases expand beyond the allowed limit',
  'yaml-not-mapping': 'a document is not a mapping where one is required',
  // generic field problems
  'field-required': 'a required field is missing',
  'field-type': 'a field has the wrong type',
  'field-unknown': 'a field is not part of the schema (typo?)',
  'field-invalid': 'a field value is not allowed',
  // envelope
  'api-version': 'apiVersion is not proxops/v1alpha1',
  'kind-unknown': 'kind is not one of the manifest kinds (or their aliases)',
  // names and values
  'name-invalid': 'metadata.name breaks the naming rule',
  'node-name-invalid': 'a PVE node name breaks the naming rule',
  'storage-id-invalid': 'a storage id breaks the naming rule',
  'filename-invalid': 'an artifact filename breaks the naming rule',
  'filename-extension': 'an artifact filename has an extension its kind does not allow',
  'tag-invalid':
    'a tag is empty, has whitespace or characters PVE rejects, is too long, or is a reserved `proxops.` marker',
  'quantity-invalid': 'a size is not an integer with an optional unit',
  'quantity-not-whole-mib': 'a memory or disk size is not a whole number of MiB',
  'quantity-range': 'a size is zero, negative or too large',
  'vmid-range': 'a vmid is outside 100..999999999',
  'state-invalid': 'spec.state is neither started nor stopped',
  'template-state': 'a template kind declares state: started',
  'url-invalid': 'an artifact url is not http(s)',
  'ref-invalid': 'a SOPS cloud-init reference is malformed',
  'annotation-invalid': 'a proxops/* annotation is unknown or malformed',
  'extra-reserved-key': 'a spec.extra key collides with a structured or guarded PVE key',
  'extra-key-invalid': 'a spec.extra key is not a PVE parameter name',
  // cross-field rules within one manifest
  'disk-size-missing': 'a disk has neither size nor image',
  'disk-size-with-image': 'a disk declares both size and image',
  'disk-interface-invalid': 'a disk interface is not scsi0-30, virtio0-15, sata0-5 or ide0-3',
  'slot-duplicate': 'two entries claim the same slot (disk interface, NIC, mount point, PCI)',
  'slot-invalid': 'a slot name does not have the required form',
  'ssd-bus': 'ssd is set on a virtio disk',
  'iothread-bus': 'iothread is set on a disk whose bus has no IO threads (sata, ide)',
  'clone-with-disks': 'a clone-backed VM declares disks, or a clone-backed LXC mount points',
  'clone-with-template': 'a clone-backed LXC also names a CTTemplate',
  'disks-required': 'a VM without clone declares no disks',
  'checksum-incomplete': 'checksum algorithm and value must be given together',
  'ssh-keys-conflict': 'ssh-keys and ssh-key-refs are both set, or "*" is mixed with keys',
  'ipconfig-invalid': 'an ipconfig entry has a malformed ip or gateway',
  'bind-mount-host-path': 'a bind mount host path is relative or a system directory',
  'path-not-absolute': 'a guest mount path is not absolute',
  'schedule-invalid': 'a BackupJob schedule is not a PVE calendar event',
  'selection-invalid': 'a BackupJob selection does not name exactly one of vmids, pool or all',
  'value-duplicate': 'a list repeats a value that must be unique',
  'pool-id-duplicate': 'two Pools of a cluster declare the same PVE pool id',
  'sdn-id-duplicate': 'two manifests of a cluster declare the same SDN zone, vnet, subnet or controller',
  'cluster-options-duplicate': 'two ClusterOptions manifests for one cluster (it has one datacenter.cfg)',
  'storage-id-duplicate': 'two Storages of a cluster declare the same PVE storage id',
  'firewall-invalid': 'a firewall rule, IP set or alias breaks a rule PVE checks (ports, addresses, macros)',
  'firewall-ref': 'a firewall rule names an IP set, alias or NIC the guest does not declare',
  'firewall-nic': 'the guest firewall is enabled but no declared NIC has firewall: true',
  'pci-device-invalid': 'a PCI device is not a bus:device[.function] address',
  // configs and composition
  'config-invalid': 'a config file is malformed',
  'cluster-name-invalid': 'a cluster name breaks the naming rule',
  'cluster-config-mismatch': 'clusters/<name>/config.yaml does not declare exactly pve.clusters.<name>',
  'cluster-not-configured': 'a composition exists for a cluster that no config declares',
  'composition-missing': 'a cluster has no clusters/<name>/resources.yaml',
  'composition-invalid': 'resources.yaml is neither a list of paths nor a mapping with resources:',
  'composition-path-escape': 'a listed path leaves the repository root',
  'composition-path-missing': 'a listed path does not exist',
  'composition-not-file': 'a listed path is not a regular file',
  'composition-extension': 'a listed path does not end in .yaml or .yml',
  'composition-duplicate': 'a path is listed twice',
  'composition-kind-root': 'a listed path is not under one of the kind roots',
  'legacy-layout': 'a manifest sits directly under a kind root',
  'manifest-unlisted':
    'a YAML file under a kind root is listed by no resources.yaml (validate: warning; error with --strict)',
  'no-clusters': 'no cluster is configured',
  'base-url-duplicate': 'two clusters share one base-url',
  'endpoint-refused':
    'credentials would go to a refused endpoint: plain http, or not the one the SOPS file binds or was pinned to',
  'cluster-unknown': 'the selected cluster does not exist',
  // per-cluster index
  'duplicate-name': 'two manifests of one kind share a metadata.name in a cluster',
  'duplicate-vmid': 'two guests claim the same vmid in a cluster (on any nodes)',
  'backup-job-id-duplicate': 'two BackupJobs of a cluster declare the same PVE backup job id',
  'access-id-duplicate': 'two access manifests of a cluster declare the same role, group, user, token or ACL entry',
  'artifact-duplicate': 'two artifacts of a cluster declare the same file on the same node and storage',
  'node-not-allowed': 'a manifest names a node outside the cluster allowlist',
  'dependency-unknown': 'a dependency target is not in this cluster',
  'dependency-kind': 'a reference names a manifest of the wrong kind',
  'dependency-cycle': 'dependencies form a cycle',
  'dependency-node': "a guest's ISO is not declared on its node",
  'clone-invalid': 'a clone source is the guest itself, shares its vmid, or cannot be cloned into it',
  'secrets-unavailable': 'the cluster SOPS file could not be read or decrypted',
} as const

export type ErrorCode = keyof typeof ErrorCodes

export interface SchemaError {
  code: ErrorCode
  /** file relative to the repository root, `/` separated; `.` for the repository itself */
  file: string
  /** 1-based; 0 when the problem has no position (missing file, repository-wide rule) */
  line: number
  /** 1-based; 0 when unknown */
  column: number
  message: string
  /** dotted field path inside the document (`spec.disks[0].size`), when the problem is a field */
  field?: string
  /** clusters whose composition includes the problem (empty for repository-wide problems) */
  clusters?: string[]
}

/** Sorts by file, line, column, code, message; stable for equal errors. */
export function compareErrors(a: SchemaError, b: SchemaError): number {
  return (
    cmp(a.file, b.file) || a.line - b.line || a.column - b.column || cmp(a.code, b.code) || cmp(a.message, b.message)
  )
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * Sorts errors and merges exact duplicates (the same problem in a base file shared by several clusters is
 * reported once, with every cluster listed).
 */
export function sortErrors(errors: readonly SchemaError[]): SchemaError[] {
  const byKey = new Map<string, SchemaError>()
  for (const e of errors) {
    const key = `${e.file}\0${e.line}\0${e.column}\0${e.code}\0${e.message}`
    const seen = byKey.get(key)
    if (seen === undefined) {
      byKey.set(key, { ...e, ...(e.clusters ? { clusters: [...e.clusters] } : {}) })
    } else if (e.clusters) {
      const merged = new Set([...(seen.clusters ?? []), ...e.clusters])
      seen.clusters = [...merged].sort()
    }
  }
  return [...byKey.values()].sort(compareErrors)
}

/** `file:line:col code message` (position parts omitted when unknown). */
export function formatError(e: SchemaError): string {
  const pos = e.line > 0 ? `${e.file}:${e.line}:${e.column}` : e.file
  return `${pos} ${e.code} ${e.message}`
}

/**
 * Issue messages built inside valibot schemas carry their code: `issueMessage('name-invalid', 'text')`.
 * The loader splits them again with {@link splitIssueMessage}.
 */
const SEP = '\u0001'
export function issueMessage(code: ErrorCode, text: string): string {
  return `${SEP}${code}${SEP}${text}`
}
export function splitIssueMessage(message: string): { code: ErrorCode; text: string } | undefined {
  if (!message.startsWith(SEP)) return undefined
  const end = message.indexOf(SEP, 1)
  if (end < 0) return undefined
  return { code: message.slice(1, end) as ErrorCode, text: message.slice(end + 1) }
}
