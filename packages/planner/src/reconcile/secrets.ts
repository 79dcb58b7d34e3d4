/** The secret references of a desired state: what must resolve before any PVE call (fail closed). */
import { STORAGE_SECRETS, secretRefField, type Manifest, type StorageSecretKey } from '@proxops/schema'

/** The SOPS references a cluster's manifests use (cloud-init ssh keys and passwords, storage credentials), sorted. */
export function secretRefs(manifests: readonly Manifest[]): string[] {
  const refs = new Set<string>()
  for (const m of manifests) {
    if (m.kind === 'Storage')
      for (const key of Object.keys(STORAGE_SECRETS) as StorageSecretKey[]) {
        const ref = m.spec[secretRefField(key)]
        if (ref !== undefined) refs.add(ref)
      }
    if (m.kind !== 'VM' && m.kind !== 'TemplateVM') continue
    const ci = m.spec['cloud-init-data']
    for (const ref of ci?.['ssh-key-refs'] ?? []) refs.add(ref)
    if (ci?.['ci-password-ref']) refs.add(ci['ci-password-ref'])
  }
  return [...refs].sort()
}
