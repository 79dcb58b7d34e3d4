import type { Add } from '../contract.js'
import { normalisePrune } from '../../manifest/prune-backups.js'
import { POOL_ID } from '../../manifest/fields.js'
import { BACKUP_JOB_ID, BACKUP_JOB_ID_MAX } from './schema.js'
import type { BackupJobManifest, RawBackupJobSpec } from './types.js'

/** Cross-field rules of a BackupJob; rewrites the schema's output in place into the normalised spec. */
export function finaliseBackupJob(m: BackupJobManifest, add: Add): void {
  const name = m.metadata.name
  const spec = m.spec
  // still the schema's output here: the selection in its raw form
  const raw = m.spec as unknown as RawBackupJobSpec
  const id = raw.id ?? name
  if (!BACKUP_JOB_ID.test(id) || id.length > BACKUP_JOB_ID_MAX)
    add(
      'field-invalid',
      raw.id === undefined ? ['metadata', 'name'] : ['spec', 'id'],
      `${JSON.stringify(id)} cannot be a PVE backup job id: a letter, then letters, digits, "-" or "_" (2 to ${BACKUP_JOB_ID_MAX} characters)${raw.id === undefined ? '; set spec.id' : ''}`,
    )
  spec.id = id
  spec.schedule = raw.schedule.trim()

  const s = raw.selection
  const forms = [s.vmids !== undefined, s.pool !== undefined, s.all === true].filter(Boolean).length
  const path = ['spec', 'selection']
  if (forms !== 1) add('selection-invalid', path, 'selection needs exactly one of vmids, pool or all: true')
  else if (s.exclude !== undefined && s.all !== true)
    add('selection-invalid', [...path, 'exclude'], 'exclude is allowed only with all: true')
  else if (s.vmids !== undefined) {
    if (s.vmids.length === 0) add('selection-invalid', [...path, 'vmids'], 'vmids must name at least one guest')
    spec.selection = { vmids: [...new Set(s.vmids)].sort((a, b) => a - b) }
  } else if (s.pool !== undefined) {
    if (!POOL_ID.test(s.pool))
      add('selection-invalid', [...path, 'pool'], `${JSON.stringify(s.pool)} is not a PVE pool name`)
    spec.selection = { pool: s.pool }
  } else spec.selection = { all: true, exclude: [...new Set(s.exclude ?? [])].sort((a, b) => a - b) }

  const prune = raw['prune-backups']
  if (prune !== undefined) {
    const normalised = normalisePrune(prune, add, ['spec', 'prune-backups'])
    if (normalised) spec['prune-backups'] = normalised
  }
}
