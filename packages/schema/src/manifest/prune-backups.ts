/**
 * `prune-backups` (pve-storage's prune-backups format), shared by the kinds that carry one (a BackupJob's archive
 * retention, a Storage's): its schema and the normalisation pve-storage validate_prune_backups applies.
 */
import * as v from 'valibot'
import type { ErrorCode } from '../errors.js'
import { bool, int, obj } from './fields.js'

const keep = (what: string) => v.optional(int(`Keep the last <N> ${what}.`, 0))

export const pruneBackupsSchema = (description: string) =>
  obj(
    {
      'keep-all': v.optional(bool('Keep every backup; conflicts with a positive keep-N.')),
      'keep-last': keep('backups'),
      'keep-hourly': keep('hours (one backup each)'),
      'keep-daily': keep('days (one backup each)'),
      'keep-weekly': keep('weeks (one backup each)'),
      'keep-monthly': keep('months (one backup each)'),
      'keep-yearly': keep('years (one backup each)'),
    },
    description,
  )

/**
 * validate_prune_backups: keep-all with a positive keep-N is an error; nothing positive means keep-all. Returns the
 * normalised setting (only positive keep-N, sorted, or `{ 'keep-all': 1 }`), undefined after an error.
 */
export function normalisePrune(
  prune: Readonly<Record<string, number | boolean | undefined>>,
  add: (code: ErrorCode, path: (string | number)[], message: string) => void,
  path: (string | number)[],
): Record<string, number> | undefined {
  const { 'keep-all': keepAll, ...rest } = prune
  const positive = Object.entries(rest).filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] > 0)
  if (positive.length === 0) return { 'keep-all': 1 }
  if (keepAll === true) {
    add('field-invalid', [...path, 'keep-all'], 'keep-all cannot be set together with a positive keep-N')
    return undefined
  }
  return Object.fromEntries(positive.sort(([a], [b]) => (a < b ? -1 : 1)))
}
