/**
 * The BackupJob kind: one `vzdump` job of `/cluster/backup` (pve-manager PVE::API2::Backup). Field names follow
 * PVE's job options; the selection is a mapping holding exactly one of `vmids`, `pool` or `all` (with
 * `exclude`), the three forms PVE::VZDump::verify_vzdump_parameters accepts. docs/schema-reference.md#backupjob
 */
import * as v from 'valibot'
import { issueMessage as m } from '../../errors.js'
import { bool, int, list, nodeName, obj, oneOf, storageId, str } from '../../manifest/fields.js'
import { calendarEventError } from './calendar-event.js'
import { pruneBackupsSchema } from '../../manifest/prune-backups.js'

/** PVE's job id: `pve-configid` on create, at most 50 characters on read/update/delete (pve-backup-jobid) */
export const BACKUP_JOB_ID = /^[a-z][a-z0-9_-]+$/i
export const BACKUP_JOB_ID_MAX = 50

/** PVE::VZDump's $verify_notes_template: the problem, or undefined */
export function notesTemplateProblem(template: string): string | undefined {
  if (template.includes('\n')) return 'contains a line feed (write \\n for a line break)'
  const problems: string[] = []
  for (const x of template.matchAll(/\\(.)/gs)) {
    if (!/^[n\\]$/.test(x[1] as string)) problems.push(`escape sequence '\\${x[1] as string}' at char ${x.index}`)
  }
  for (const x of template.matchAll(/\{\{([^\s{}]+)\}\}/g)) {
    const name = x[1] as string
    if (!/^(cluster|guestname|node|vmid)$/.test(name))
      problems.push(`variable '${name}' at char ${x.index + x[0].length - name.length}`)
  }
  return problems.length
    ? `found unknown: ${problems.join(', ')} (variables: {{cluster}}, {{guestname}}, {{node}}, {{vmid}}; escapes \\n and \\\\)`
    : undefined
}

const vmid = int('A guest vmid.', 100, 999_999_999, 'vmid-range')

export const backupJobSpecSchema = obj(
  {
    id: v.optional(
      v.pipe(
        v.string(m('field-type', 'must be a string')),
        v.description('PVE job id; default `metadata.name`. Set it to manage a job PVE named (a generated uuid).'),
        v.maxLength(BACKUP_JOB_ID_MAX, m('field-invalid', `must be at most ${BACKUP_JOB_ID_MAX} characters`)),
      ),
    ),
    schedule: v.pipe(
      v.string(m('field-type', 'must be a string')),
      v.description(
        "When the job runs: a PVE calendar event (`daily`, `mon..fri 02:30`, `sat 21:00`, `*-*-01 03:00`), checked offline with PVE's grammar.",
      ),
      v.maxLength(128, m('schedule-invalid', 'must be at most 128 characters')),
      v.rawCheck<string>(({ dataset, addIssue }) => {
        if (!dataset.typed) return
        const err = calendarEventError(dataset.value)
        if (err !== null)
          addIssue({
            message: m('schedule-invalid', `${JSON.stringify(dataset.value)} is not a PVE calendar event: ${err}`),
          })
      }),
    ),
    storage: storageId('Storage with `backup` content the archives go to.'),
    selection: obj(
      {
        vmids: v.optional(list(vmid, 'Back up these guests.')),
        pool: v.optional(str('Back up every guest of this PVE pool.')),
        all: v.optional(bool('Back up every guest (of `node`, when set).')),
        exclude: v.optional(list(vmid, 'With `all`: guests left out.')),
      },
      'Which guests: exactly one of `vmids`, `pool` or `all: true` (with optional `exclude`).',
    ),
    mode: v.optional(oneOf(['snapshot', 'suspend', 'stop'], 'vzdump mode; PVE default `snapshot`.')),
    compress: v.optional(
      v.pipe(
        v.union(
          [v.picklist(['0', '1', 'gzip', 'lzo', 'zstd']), v.picklist([0, 1])],
          m('field-invalid', 'must be one of: 0, 1, gzip, lzo, zstd'),
        ),
        v.description('Compression: `0` (none), `gzip`, `lzo`, `zstd` (`1` is lzo); PVE default `0`.'),
        v.transform((x) => String(x)),
      ),
    ),
    'prune-backups': v.optional(
      pruneBackupsSchema("Retention of this job's archives (PVE `prune-backups`), instead of the storage's own."),
    ),
    'notes-template': v.optional(
      v.pipe(
        v.string(m('field-type', 'must be a string')),
        v.description('Notes of each backup; variables `{{cluster}}`, `{{guestname}}`, `{{node}}`, `{{vmid}}`.'),
        v.maxLength(1024, m('field-invalid', 'must be at most 1024 characters')),
        v.rawCheck<string>(({ dataset, addIssue }) => {
          if (!dataset.typed) return
          const problem = notesTemplateProblem(dataset.value)
          if (problem !== undefined) addIssue({ message: m('field-invalid', problem) })
        }),
      ),
    ),
    enabled: v.optional(bool('Whether PVE runs the job; default true.'), true),
    node: v.optional(nodeName('Run only on this node (PVE `node`).')),
    comment: v.optional(
      v.pipe(
        v.string(m('field-type', 'must be a string')),
        v.description('Free text; ProxOps writes it after its ownership marker in the PVE comment.'),
        v.maxLength(400, m('field-invalid', 'must be at most 400 characters')),
        v.check((s) => !/[\r\n]/.test(s), m('field-invalid', 'must be one line')),
      ),
    ),
  },
  'BackupJob spec.',
)
