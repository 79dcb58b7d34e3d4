/** Reading the backup-job kind: `/cluster/backup`, one request; a failed read makes every job unknown. */
import type { LiveInventory } from '../../inventory.js'
import { compare, errorText } from '../../kit/text.js'
import type { Read, ReadContext } from '../../kit/kind.js'
import type { LiveReader } from '../../ports.js'
import type { ObserveOptions } from '../../kit/kind.js'

export async function readBackupJobs(ctx: ReadContext): Promise<Pick<LiveInventory, 'backupJobs'>> {
  return { backupJobs: await readBackupJobList(ctx.reader, ctx.read, ctx.options) }
}

/** `/cluster/backup`, one request; a failed read makes every backup job unknown this cycle */
async function readBackupJobList(
  reader: LiveReader,
  read: Read,
  options: ObserveOptions,
): Promise<LiveInventory['backupJobs']> {
  const list = reader.backupJobs.bind(reader)
  try {
    const jobs = await read(() => list())
    return { known: jobs.map((j) => ({ id: j.id, values: j.values })).sort((a, b) => compare(a.id, b.id)) }
  } catch (error) {
    options.signal?.throwIfAborted()
    return { unreadable: `read failed: ${errorText(error)}` }
  }
}
