import type { KindReference } from '../contract.js'
import { poolReference } from '../pool/references.js'
import { storageKey } from '../storage/references.js'
import type { BackupJobManifest } from './types.js'

/**
 * The pool a job selects (vzdump backs up the pool's members). Its `vmids` are not prerequisites: PVE's
 * create_job takes any vmid list (PVE::VZDump::verify_vzdump_parameters checks only its form). And its target storage.
 */
export function backupJobReferences(m: BackupJobManifest): KindReference<'Pool' | 'Storage'>[] {
  const s = m.spec.selection
  return [
    ...('pool' in s ? [poolReference(s.pool, ['spec', 'selection', 'pool'])] : []),
    // the target storage: a declared Storage is created first (create_job checks it exists)
    ...(m.spec.storage !== undefined
      ? [
          {
            kind: 'Storage' as const,
            name: m.spec.storage,
            via: 'storage' as const,
            path: ['spec', 'storage'],
            identity: storageKey(m.spec.storage),
          },
        ]
      : []),
  ]
}
