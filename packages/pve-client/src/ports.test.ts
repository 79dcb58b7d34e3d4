/**
 * Type-level proof that the clients satisfy the planner's ports. The planner is not imported (the dependency
 * runs planner -> pve-client/wire, never back): below is a structurally identical copy of
 * packages/planner/src/ports.ts as of this commit. `tsc --noEmit` checks the assignments; the CLI, which sees
 * both packages, should assert the same against the real interfaces.
 */
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { PveClient, PveReadOnlyClient } from './client.js'

type GuestType = 'qemu' | 'lxc'
interface ClusterResource {
  id: string
  type: 'qemu' | 'lxc' | 'node' | 'storage' | 'sdn' | 'pool' | string
  node?: string
  vmid?: number
  name?: string
  status?: string
  template?: boolean
  tags?: string
  lock?: string
  pool?: string
  storage?: string
  plugintype?: string
  content?: string
  shared?: boolean
}
interface NodeGuest {
  vmid: number
  name?: string
  status: 'running' | 'stopped' | string
  template?: boolean
  lock?: string
  tags?: string
  qmpstatus?: string
}
interface GuestConfig {
  digest: string
  values: Readonly<Record<string, string>>
}
interface PendingEntry {
  key: string
  value?: string
  pending?: string
  delete?: number
}
interface GuestStatus {
  status: 'running' | 'stopped' | string
  qmpstatus?: string
  lock?: string
  template?: boolean
  name?: string
}
interface StorageInfo {
  storage: string
  type: string
  content: string[]
  active: boolean
  enabled: boolean
  shared: boolean
  avail?: number
  total?: number
}
interface StorageContentItem {
  volid: string
  content: string
  format?: string
  size?: number
  vmid?: number
}
interface TaskRef {
  node: string
  upid: string
}
interface TaskStatus {
  upid: string
  node: string
  type: string
  id: string
  status: 'running' | 'stopped'
  exitstatus?: string
}
interface TaskResult {
  upid: string
  ok: boolean
  exitstatus: string
  log: string[]
}
interface WaitOptions {
  timeoutMs?: number
  pollIntervalMs?: number
  signal?: AbortSignal
}
type PveParams = Readonly<Record<string, string | number | boolean>>
interface LiveReader {
  version(): Promise<{ version: string; release: string; repoid?: string }>
  clusterResources(type?: 'vm' | 'storage' | 'node'): Promise<ClusterResource[]>
  guestConfig(node: string, type: GuestType, vmid: number, options?: { current?: boolean }): Promise<GuestConfig>
  guestPending(node: string, type: GuestType, vmid: number): Promise<PendingEntry[]>
  guestStatus(node: string, type: GuestType, vmid: number): Promise<GuestStatus>
  nodeGuests?(node: string, type: GuestType): Promise<NodeGuest[]>
  storages(node: string): Promise<StorageInfo[]>
  storageContent(node: string, storage: string, content?: string): Promise<StorageContentItem[]>
  taskStatus(task: TaskRef): Promise<TaskStatus>
}
interface PveWriter {
  createGuest(node: string, type: GuestType, params: PveParams): Promise<TaskRef>
  cloneGuest(node: string, type: GuestType, vmid: number, params: PveParams): Promise<TaskRef>
  updateConfig(node: string, type: GuestType, vmid: number, params: PveParams, options?: { digest?: string }): Promise<TaskRef | null>
  resizeDisk(node: string, type: GuestType, vmid: number, disk: string, size: string, options?: { digest?: string }): Promise<TaskRef | null>
  start(node: string, type: GuestType, vmid: number): Promise<TaskRef>
  shutdown(node: string, type: GuestType, vmid: number, options?: { timeoutSeconds?: number; forceStop?: boolean }): Promise<TaskRef>
  stop(node: string, type: GuestType, vmid: number): Promise<TaskRef>
  reboot(node: string, type: GuestType, vmid: number): Promise<TaskRef>
  markTemplate(node: string, type: GuestType, vmid: number): Promise<TaskRef | null>
  deleteGuest(node: string, type: GuestType, vmid: number): Promise<TaskRef>
  downloadUrl(node: string, storage: string, params: PveParams): Promise<TaskRef>
  waitTask(task: TaskRef, options?: WaitOptions): Promise<TaskResult>
}

describe('planner ports', () => {
  it('PveReadOnlyClient is a LiveReader and not a PveWriter; PveClient is both', () => {
    expectTypeOf<PveReadOnlyClient>().toMatchTypeOf<LiveReader>()
    expectTypeOf<PveReadOnlyClient>().not.toMatchTypeOf<PveWriter>()
    expectTypeOf<PveClient>().toMatchTypeOf<LiveReader>()
    expectTypeOf<PveClient>().toMatchTypeOf<PveWriter>()
    // the same, as plain assignments
    const asPorts = (ro: PveReadOnlyClient, rw: PveClient): [LiveReader, LiveReader & PveWriter] => [ro, rw]
    expect(typeof asPorts).toBe('function')
    // the optional method is implemented (observe() then reads power state per node, not per guest)
    expectTypeOf<PveReadOnlyClient['nodeGuests']>().toMatchTypeOf<NonNullable<LiveReader['nodeGuests']>>()
  })
})
