import type { Cluster } from '../model/cluster.js'
import { fail400 } from '../model/errors.js'
import { readConfig, readPending } from '../model/guestconf.js'
import { createLxc, powerLxc, updateLxc } from '../model/lxc.js'
import { cloneGuest } from '../model/clone.js'
import { destroyGuest, resizeGuest, templateGuest } from '../model/guest-ops.js'
import {
  createQemu,
  rebootQemu,
  shutdownQemu,
  startQemu,
  stopQemu,
  suspendResumeQemu,
  updateQemu,
} from '../model/qemu.js'
import { guestListItem, guestStatusCurrent } from '../model/views.js'
import { migrateQemu, qemuMigratePrecondition } from '../model/migrate-qemu.js'
import { lxcMigratePrecondition, migrateLxc } from '../model/migrate-lxc.js'
import { moveCtVolume, moveVmDisk } from '../model/move-disk.js'
import {
  snapshotAsConfig,
  snapshotConfig,
  snapshotCreate,
  snapshotDelete,
  snapshotList,
  snapshotRollback,
  snapshotUpdate,
} from '../model/snapshots.js'
import { bool, int, str, type RouteTable } from './params.js'
import type { GuestCall } from '../model/guest-call.js'
import type { RequestContext } from '../http/types.js'

/** /nodes/{node}/qemu... and /nodes/{node}/lxc... */
export function guestRoutes(c: Cluster): RouteTable {
  const node = (ctx: RequestContext) => str(ctx, 'node') ?? ''
  const vmid = (ctx: RequestContext) => int(ctx, 'vmid') ?? 0
  const snapname = (ctx: RequestContext) => str(ctx, 'snapname') ?? ''
  /** a route to a call on the guest the path names, with the request's parameters and caller */
  const onGuest = (call: GuestCall) => (ctx: RequestContext) => call(c, node(ctx), vmid(ctx), ctx.params, ctx.caller)
  const table: RouteTable = []
  for (const type of ['qemu', 'lxc'] as const) {
    const base = `/nodes/{node}/${type}`
    table.push(
      [
        'GET',
        base,
        (ctx) => {
          c.requireNode(node(ctx))
          return [...c.guests.values()]
            .filter((g) => g.node === node(ctx) && g.type === type)
            .map((g) => guestListItem(c, g, bool(ctx, 'full') ?? false))
        },
      ],
      ['POST', base, (ctx) => (type === 'qemu' ? createQemu : createLxc)(c, node(ctx), ctx.params, ctx.caller)],
      [
        'GET',
        `${base}/{vmid}`,
        (ctx) => {
          c.requireNode(node(ctx))
          c.requireGuest(node(ctx), type, vmid(ctx))
          const subdirs =
            type === 'qemu'
              ? [
                  'config',
                  'pending',
                  'status',
                  'unlink',
                  'vncproxy',
                  'termproxy',
                  'migrate',
                  'resize',
                  'move',
                  'rrd',
                  'rrddata',
                  'monitor',
                  'agent',
                  'snapshot',
                  'spiceproxy',
                  'sendkey',
                  'firewall',
                  'mtunnel',
                  'remote_migrate',
                ]
              : [
                  'config',
                  'pending',
                  'status',
                  'vncproxy',
                  'termproxy',
                  'vncwebsocket',
                  'spiceproxy',
                  'migrate',
                  'clone',
                  'rrd',
                  'rrddata',
                  'firewall',
                  'snapshot',
                  'resize',
                  'interfaces',
                ]
          return subdirs.map((subdir) => ({ subdir }))
        },
      ],
      ['DELETE', `${base}/{vmid}`, (ctx) => destroyGuest(c, node(ctx), vmid(ctx), type, ctx.params, ctx.caller)],
      [
        'GET',
        `${base}/{vmid}/config`,
        (ctx) => {
          c.requireNode(node(ctx))
          const g = c.requireGuest(node(ctx), type, vmid(ctx))
          const snapshot = str(ctx, 'snapshot')
          if (snapshot !== undefined && bool(ctx, 'current')) {
            throw fail400({
              snapshot: `cannot use 'snapshot' parameter with 'current'`,
              current: `cannot use 'snapshot' parameter with 'current'`,
            })
          }
          if (snapshot !== undefined) return snapshotAsConfig(g, snapshot)
          return readConfig(g, bool(ctx, 'current') ?? false)
        },
      ],
      [
        'PUT',
        `${base}/{vmid}/config`,
        (ctx) =>
          type === 'qemu'
            ? updateQemu(c, node(ctx), vmid(ctx), ctx.params, ctx.caller, false)
            : updateLxc(c, node(ctx), vmid(ctx), ctx.params),
      ],
      [
        'GET',
        `${base}/{vmid}/pending`,
        (ctx) => {
          c.requireNode(node(ctx))
          return readPending(c.requireGuest(node(ctx), type, vmid(ctx)))
        },
      ],
      [
        'GET',
        `${base}/{vmid}/status`,
        (ctx) => {
          c.requireNode(node(ctx))
          c.requireGuest(node(ctx), type, vmid(ctx))
          return [
            'current',
            'start',
            'stop',
            'shutdown',
            'reboot',
            'suspend',
            'resume',
            ...(type === 'qemu' ? ['reset'] : []),
          ].map((subdir) => ({ subdir }))
        },
      ],
      [
        'GET',
        `${base}/{vmid}/status/current`,
        (ctx) => {
          c.requireNode(node(ctx))
          return guestStatusCurrent(c, c.requireGuest(node(ctx), type, vmid(ctx)))
        },
      ],
      ['GET', `${base}/{vmid}/snapshot`, (ctx) => snapshotList(c, node(ctx), type, vmid(ctx))],
      [
        'POST',
        `${base}/{vmid}/snapshot`,
        (ctx) => snapshotCreate(c, node(ctx), vmid(ctx), type, ctx.params, ctx.caller),
      ],
      // snapshot_cmd_idx lists the sub-commands without looking the snapshot up
      ['GET', `${base}/{vmid}/snapshot/{snapname}`, () => [{ cmd: 'rollback' }, { cmd: 'config' }]],
      [
        'DELETE',
        `${base}/{vmid}/snapshot/{snapname}`,
        (ctx) => snapshotDelete(c, node(ctx), type, vmid(ctx), snapname(ctx), ctx.params, ctx.caller),
      ],
      [
        'GET',
        `${base}/{vmid}/snapshot/{snapname}/config`,
        (ctx) => snapshotConfig(c, node(ctx), type, vmid(ctx), snapname(ctx)),
      ],
      [
        'PUT',
        `${base}/{vmid}/snapshot/{snapname}/config`,
        (ctx) => snapshotUpdate(c, node(ctx), type, vmid(ctx), snapname(ctx), ctx.params),
      ],
      [
        'POST',
        `${base}/{vmid}/snapshot/{snapname}/rollback`,
        (ctx) => snapshotRollback(c, node(ctx), type, vmid(ctx), snapname(ctx), ctx.params, ctx.caller),
      ],
      ['PUT', `${base}/{vmid}/resize`, (ctx) => resizeGuest(c, node(ctx), vmid(ctx), type, ctx.params, ctx.caller)],
      ['POST', `${base}/{vmid}/clone`, (ctx) => cloneGuest(c, node(ctx), vmid(ctx), type, ctx.params, ctx.caller)],
      [
        'POST',
        `${base}/{vmid}/template`,
        (ctx) => {
          const upid = templateGuest(c, node(ctx), vmid(ctx), type, ctx.caller)
          // lxc forks a vztemplate worker but answers null: there is no UPID to wait on
          return type === 'qemu' ? upid : null
        },
      ],
    )
  }
  table.push(
    [
      'POST',
      '/nodes/{node}/qemu/{vmid}/config',
      (ctx) => updateQemu(c, node(ctx), vmid(ctx), ctx.params, ctx.caller, true),
    ],
    ['POST', '/nodes/{node}/qemu/{vmid}/status/start', onGuest(startQemu)],
    ['POST', '/nodes/{node}/qemu/{vmid}/status/stop', onGuest(stopQemu)],
    ['POST', '/nodes/{node}/qemu/{vmid}/status/shutdown', onGuest(shutdownQemu)],
    ['POST', '/nodes/{node}/qemu/{vmid}/status/reboot', onGuest(rebootQemu)],
    [
      'POST',
      '/nodes/{node}/qemu/{vmid}/status/suspend',
      (ctx) => suspendResumeQemu(c, node(ctx), vmid(ctx), 'suspend', ctx.caller),
    ],
    [
      'POST',
      '/nodes/{node}/qemu/{vmid}/status/resume',
      (ctx) => suspendResumeQemu(c, node(ctx), vmid(ctx), 'resume', ctx.caller),
    ],
    [
      'POST',
      '/nodes/{node}/qemu/{vmid}/status/reset',
      (ctx) => suspendResumeQemu(c, node(ctx), vmid(ctx), 'reset', ctx.caller),
    ],
  )
  table.push(
    ['GET', '/nodes/{node}/qemu/{vmid}/migrate', (ctx) => qemuMigratePrecondition(c, node(ctx), vmid(ctx))],
    ['POST', '/nodes/{node}/qemu/{vmid}/migrate', onGuest(migrateQemu)],
    ['POST', '/nodes/{node}/lxc/{vmid}/migrate', onGuest(migrateLxc)],
    ['POST', '/nodes/{node}/qemu/{vmid}/move_disk', onGuest(moveVmDisk)],
    ['POST', '/nodes/{node}/lxc/{vmid}/move_volume', onGuest(moveCtVolume)],
  )
  // pve-container has the precondition check from PVE 9 on
  if (c.pveVersion !== '8.4')
    table.push(['GET', '/nodes/{node}/lxc/{vmid}/migrate', (ctx) => lxcMigratePrecondition(c, node(ctx), vmid(ctx))])
  for (const action of ['start', 'stop', 'shutdown', 'reboot', 'suspend', 'resume'] as const) {
    table.push([
      'POST',
      `/nodes/{node}/lxc/{vmid}/status/${action}`,
      (ctx) => powerLxc(c, node(ctx), vmid(ctx), action, ctx.params, ctx.caller),
    ])
  }
  return table
}
