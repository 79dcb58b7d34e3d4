/** Naming rules (docs/repository.md#naming-rules). Each returns undefined when valid, else a message a person can act on. */

export const CLUSTER_NAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/
/** lowercase alphanumerics with single `-` separators, no leading or trailing `-` */
export const RESOURCE_NAME = /^[a-z0-9](?:-?[a-z0-9])*$/
export const RESOURCE_NAME_MAX = 63
export const STORAGE_ID = /^[A-Za-z0-9_.-]+$/
export const ARTIFACT_FILENAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
/** PVE's own tag pattern (pve-tag): what PVE accepts in `tags` */
export const PVE_TAG = /^[A-Za-z0-9_][A-Za-z0-9_+.-]*$/
export const TAG_MAX = 256
/** name part of a SOPS cloud-init reference (`cloud-init.ssh-keys.<name>`) */
export const REF_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/

export function checkClusterName(name: string): string | undefined {
  if (name.length < 1 || name.length > 64 || !CLUSTER_NAME.test(name)) {
    return `cluster name "${name}" is invalid: use 1-64 lowercase letters, digits and "-", not starting or ending with "-"`
  }
  return undefined
}

export function checkResourceName(name: string): string | undefined {
  if (!RESOURCE_NAME.test(name) || name.length > RESOURCE_NAME_MAX) {
    return `name "${name}" is invalid: use at most ${RESOURCE_NAME_MAX} lowercase letters and digits, separated by single "-", not starting or ending with "-"`
  }
  return undefined
}

/** PVE's `pve-node` format (pve_verify_node_name in pve-common): a host name label. */
export const NODE_NAME = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$/

export function checkNodeName(name: string): string | undefined {
  if (name.length < 1 || name.length > 64 || !NODE_NAME.test(name)) {
    return `node name ${JSON.stringify(name)} is invalid: PVE node names are 1-64 letters, digits and "-", not starting or ending with "-"`
  }
  return undefined
}

export function checkStorageId(id: string): string | undefined {
  if (!STORAGE_ID.test(id)) return `storage id "${id}" is invalid: use letters, digits, "_", "." and "-"`
  return undefined
}

export function checkTag(tag: string): string | undefined {
  if (tag.length === 0 || tag.length > TAG_MAX || !PVE_TAG.test(tag)) {
    return `tag "${tag}" is invalid: 1-${TAG_MAX} characters of letters, digits, "_", "-", "+" and ".", not starting with "-", "+" or "."`
  }
  if (tag.toLowerCase().startsWith('proxops.')) {
    return `tag "${tag}" is reserved: "proxops.<cluster>" marks the cluster entry that owns a guest and is written by proxops`
  }
  return undefined
}
