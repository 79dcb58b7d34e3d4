/**
 * adopt for backup jobs: each live `/cluster/backup` job to a BackupJob manifest through the job's field table
 * (fields.ts), the options it does not model reported as gaps. Pure.
 */
import { adoptedFile, type AdoptedFile, type AdoptGap } from '../../kit/adopt.js'
import { adoptSpec } from './fields.js'
import type { LiveBackupJob } from './types.js'

export function adoptBackupJob(
  job: LiveBackupJob,
  cluster: string,
  ownershipTag: string,
  /** a free manifest name derived from the job id */
  name: string,
  gaps: AdoptGap[],
): AdoptedFile {
  const { spec, unmodelled } = adoptSpec(job, ownershipTag)
  for (const { key, value } of unmodelled)
    gaps.push({
      kind: 'BackupJob',
      node: '',
      id: job.id,
      field: key,
      value,
      note: 'not modelled by BackupJob; stays on PVE as it is',
    })
  return adoptedFile('BackupJob', cluster, name, name === job.id ? spec : { id: job.id, ...spec })
}
