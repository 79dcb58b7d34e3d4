/**
 * adopt for storages: each `GET /storage` section to a Storage manifest through the field table (fields.ts); the
 * options the table does not model are gaps. A credential is never written: PVE never returns one, so where the
 * type has one in use (a user name, an external Ceph monitor, a PBS key fingerprint) the manifest gets a reference
 * to fill in (`secrets.storage-<id>-<key>`) and is listed as incomplete until the SOPS file holds it. Pure.
 */
import { API_VERSION, KIND_ROOT_OF, secretRefField, type StorageSecretKey } from '@proxops/schema'
import type { LiveStorageConfig } from '../../inventory.js'
import type { AdoptedFile, AdoptGap } from '../../kit/adopt.js'
import { decodeOption, isStorageType, modelled } from './fields.js'

/** which credentials a live section shows signs of using (PVE lists none of them) */
function credentialsInUse(s: LiveStorageConfig): StorageSecretKey[] {
  const v = s.values
  const out: StorageSecretKey[] = []
  if ((s.type === 'cifs' || s.type === 'pbs') && v.username !== undefined) out.push('password')
  if (s.type === 'rbd' && v.monhost !== undefined) out.push('keyring')
  if (s.type === 'pbs' && v['encryption-key'] !== undefined) out.push('encryption-key')
  if (s.type === 'pbs' && v['master-pubkey'] !== undefined) out.push('master-pubkey')
  return out
}

/** the SOPS name an adopted reference proposes (REF_NAME: lowercase letters, digits, "-") */
const refName = (id: string, key: string): string =>
  `secrets.${`storage-${id}-${key}`
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 64)}`

export function adoptStorage(
  s: LiveStorageConfig,
  cluster: string,
  name: string,
  gaps: AdoptGap[],
): AdoptedFile | undefined {
  if (!isStorageType(s.type)) {
    gaps.push({
      kind: 'Storage',
      node: '',
      id: s.storage,
      field: 'type',
      value: s.type,
      note: 'storage type not modelled by Storage; stays on PVE as it is',
    })
    return undefined
  }
  const type = s.type
  const spec: Record<string, unknown> = name === s.storage ? { type } : { id: s.storage, type }
  for (const key of Object.keys(s.values).sort()) {
    const value = s.values[key] as string
    // the listed PBS key fingerprint and `master-pubkey 1` stand for files PVE keeps in priv: references below
    if (key === 'encryption-key' || key === 'master-pubkey') continue
    if (modelled(type, key)) spec[key] = decodeOption(key, value)
    else
      gaps.push({
        kind: 'Storage',
        node: '',
        id: s.storage,
        field: key,
        value,
        note: 'not modelled by Storage; stays on PVE as it is',
      })
  }
  const incomplete: string[] = []
  for (const key of credentialsInUse(s)) {
    const ref = refName(s.storage, key)
    spec[secretRefField(key)] = ref
    incomplete.push(
      `${secretRefField(key)}: PVE never returns the ${key}; put it into the cluster's SOPS file as ${ref}`,
    )
  }
  return {
    path: `${KIND_ROOT_OF.Storage}/${cluster}/${name}.yaml`,
    kind: 'Storage',
    name,
    document: { apiVersion: API_VERSION, kind: 'Storage', metadata: { name }, spec },
    incomplete,
  }
}
