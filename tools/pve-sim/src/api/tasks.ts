import type { Cluster } from '../model/cluster.js'
import { fail400 } from '../model/errors.js'
import { dumpLogfile, taskStatus, upidFields, UPID_RE, type Task } from '../model/tasks.js'
import { WithTotal } from './envelope.js'
import { int, str, bool, type RouteTable } from './params.js'

/** /nodes/{node}/tasks... */
export function taskRoutes(c: Cluster): RouteTable {
  const find = (node: string, upid: string): Task => {
    c.requireNode(node)
    if (!UPID_RE.test(upid)) throw fail400({ upid: 'unable to parse worker upid' })
    const t = c.tasks.get(upid)
    if (!t || t.node !== node || c.tasks.inNoSuchWindow(t)) throw fail400({ upid: 'no such task' })
    return t
  }
  return [
    [
      'GET',
      '/nodes/{node}/tasks',
      (ctx) => {
        const node = str(ctx, 'node') ?? ''
        c.requireNode(node)
        const vmid = int(ctx, 'vmid')
        const type = str(ctx, 'typefilter')
        const source = str(ctx, 'source') ?? 'archive'
        const errorsOnly = bool(ctx, 'errors') ?? false
        const limit = int(ctx, 'limit') ?? 50
        const start = int(ctx, 'start') ?? 0
        const since = int(ctx, 'since')
        const until = int(ctx, 'until')
        const userfilter = str(ctx, 'userfilter')?.toLowerCase()
        // errors=1 wins over statusfilter and drops only the OK tasks (Tasks.pm node_tasks)
        const statusfilter = errorsOnly
          ? undefined
          : str(ctx, 'statusfilter')
              ?.split(/[,;\s]+/)
              .map((s) => s.toLowerCase())
        const matches = (t: Task): boolean =>
          (userfilter === undefined || t.user.toLowerCase().includes(userfilter)) &&
          (type === undefined || t.type === type) &&
          (vmid === undefined || t.id === String(vmid)) &&
          (since === undefined || t.starttime >= since) &&
          (until === undefined || t.starttime <= until) &&
          (errorsOnly ? statusClass(t) !== 'ok' : statusfilter === undefined || statusfilter.includes(statusClass(t)))
        const mine = c.tasks.all().filter((t) => t.node === node)
        // the active list first, then the index file read backwards (newest first)
        const active =
          source === 'active' || source === 'all' ? mine.filter((t) => t.status === 'running').reverse() : []
        const archive =
          source === 'archive' || source === 'all' ? mine.filter((t) => t.status === 'stopped').reverse() : []
        const list = [...active, ...archive].filter(matches)
        const page = list.slice(start, start + limit).map((t) => {
          // upid_decode plus $convert_token_task: a token's task names the user and the token apart
          const item: Record<string, unknown> = {
            ...upidFields(t),
            user: t.user,
          }
          if (t.tokenid !== undefined) item.tokenid = t.tokenid
          if (t.status === 'stopped') {
            item.endtime = t.endtime
            item.status = t.exitstatus
          } else {
            item.status = 'RUNNING'
          }
          return item
        })
        // `total` counts every matching task, also those before `start` and after `limit`
        return new WithTotal(page, list.length)
      },
    ],
    [
      'GET',
      '/nodes/{node}/tasks/{upid}',
      (ctx) => {
        find(str(ctx, 'node') ?? '', str(ctx, 'upid') ?? '')
        return [{ name: 'log' }, { name: 'status' }]
      },
    ],
    [
      'GET',
      '/nodes/{node}/tasks/{upid}/status',
      (ctx) => taskStatus(find(str(ctx, 'node') ?? '', str(ctx, 'upid') ?? '')),
    ],
    [
      'GET',
      '/nodes/{node}/tasks/{upid}/log',
      (ctx) => {
        const t = find(str(ctx, 'node') ?? '', str(ctx, 'upid') ?? '')
        const start = int(ctx, 'start') ?? 0
        const limit = int(ctx, 'limit') ?? 50
        const { page, total } = dumpLogfile(t.log, start, limit)
        return new WithTotal(page, total)
      },
    ],
    [
      'DELETE',
      '/nodes/{node}/tasks/{upid}',
      (ctx) => {
        c.tasks.stop(find(str(ctx, 'node') ?? '', str(ctx, 'upid') ?? ''))
        return null
      },
    ],
  ]
}

/** the class `statusfilter` matches: ok, warning, error (running tasks count as unknown) */
function statusClass(t: Task): string {
  if (t.status === 'running' || t.exitstatus === undefined) return 'unknown'
  if (t.exitstatus === 'OK') return 'ok'
  return /^WARNINGS: \d+$/.test(t.exitstatus) ? 'warning' : 'error'
}
