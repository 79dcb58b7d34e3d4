import type { KindReference } from '../contract.js'
import { poolReference } from '../pool/references.js'
import type { BackupJobManifest } from './types.js'

/**
 * The pool a job selects (vzdump backs up the pool's members). Its `vmids` are not prerequisites: PVE's
 * create_job takes any vmid list (PVE::VZDump::verify_vzdump_parameters checks only its form).
 */
export function backupJobReferences(m: BackupJobManifest): KindReference<'Pool'>[] {
  const s = m.spec.selection
  return 'pool' in s ? [poolReference(s.pool, ['spec', 'selection', 'pool'])] : []
}
