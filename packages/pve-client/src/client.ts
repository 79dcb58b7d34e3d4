import {
  type BackupJobItem,
  decodeBackupJobs,
  decodeClusterResources,
  decodeGuestList,
  decodeGuestStatus,
  decodeHaConfig,
  decodeMigratePrecondition,
  decodeNodeStatus,
  decodeNodes,
  decodePending,
  decodePoolDetail,
  decodePools,
  decodeSnapshots,
  decodeStorageConfigs,
  decodeClusterOptions,
  decodeStorageContent,
  decodeStorages,
  decodeVersion,
  decodeWith,
  obj,
} from './decode.js'
import { PveError, PveTaskTimeoutError } from './errors.js'
import { firewallCall, readGuestFirewall } from './firewall.js'
import {
  decodeAccessGroups,
  decodeAccessRoles,
  decodeAccessUsers,
  decodeAcl,
  decodeNewToken,
  decodeRealms,
} from './access.js'
import type { AccessGroup, AccessRole, AccessUser, AclEntry, NewToken, RealmInfo } from './wire/access.js'
import { Secret } from './secret.js'
import { abortedError, sleep } from './retry.js'
import { type GetFn, type TaskLogPage, assertTaskOk, taskLog, taskStatus, waitTask } from './tasks.js'
import { type CallSpec, type Method, type Params, Transport, type TransportOptions } from './transport.js'
import type {
  ClusterResource,
  FirewallWrite,
  GuestFirewall,
  GuestConfig,
  GuestListItem,
  GuestStatus,
  MigratePrecondition,
  GuestType,
  HaItem,
  HaObject,
  NodeInfo,
  NodeStatus,
  PendingEntry,
  PoolDetail,
  PoolInfo,
  PveParams,
  SnapshotInfo,
  StorageConfigItem,
  StorageContentItem,
  StorageInfo,
  TaskRef,
  TaskResult,
  TaskStatus,
  VersionInfo,
  WaitOptions,
} from './wire/types.js'
import { decodeGuestConfig } from './wire/config.js'
import { toInt } from './wire/scalars.js'
import { isUpid, parseUpid } from './wire/upid.js'
import { decodeSdnObjects, decodeSdnZoneStatus, type SdnKind, type SdnObject, type SdnZoneStatus } from './wire/sdn.js'

export type PveClientOptions = TransportOptions

/** Options accepted by every call. */
export interface CallOptions {
  signal?: AbortSignal
  /** overrides the client's per-request timeout */
  timeoutMs?: number
}

const GUEST_TYPES: readonly GuestType[] = ['qemu', 'lxc']

function guestType(type: GuestType): GuestType {
  if (!GUEST_TYPES.includes(type)) throw new PveError('PVE_CONFIG', `guest type must be qemu or lxc`)
  return type
}

function callOpts(o: CallOptions | undefined): Pick<CallSpec, 'signal' | 'timeoutMs'> {
  return {
    ...(o?.signal ? { signal: o.signal } : {}),
    ...(o?.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
  }
}

/**
 * Reads only. Built on a GET-only function, so there is no way to send a write through it; it satisfies the
 * planner's `LiveReader` port. Get one from `createPveReadOnlyClient()` or `PveClient.readOnly()`.
 */
export class PveReadOnlyClient {
  readonly #get: GetFn
  readonly #close: () => Promise<void>

  /** @internal use createPveReadOnlyClient() or PveClient.readOnly() */
  constructor(get: GetFn, close: () => Promise<void>) {
    this.#get = get
    this.#close = close
  }

  /** Releases the connection pool (no-op for a view obtained from `PveClient.readOnly()`). */
  close(): Promise<void> {
    return this.#close()
  }

  /**
   * Escape hatch for endpoints without a typed method: `GET <path>` (a template such as `/nodes/{node}/dns`,
   * with `pathParams`), returning PVE's `data` undecoded. Reads retry like every read.
   */
  get(
    path: string,
    options?: { pathParams?: Readonly<Record<string, string | number>>; query?: PveParams } & CallOptions,
  ): Promise<unknown> {
    return this.#get({
      path,
      ...(options?.pathParams ? { pathParams: options.pathParams } : {}),
      ...(options?.query ? { query: options.query } : {}),
      ...callOpts(options),
    })
  }

  async version(o?: CallOptions): Promise<VersionInfo> {
    const data = await this.#get({ path: '/version', ...callOpts(o) })
    return decodeWith('GET /version', () => decodeVersion(data))
  }

  async nodes(o?: CallOptions): Promise<NodeInfo[]> {
    const data = await this.#get({ path: '/nodes', ...callOpts(o) })
    return decodeWith('GET /nodes', () => decodeNodes(data))
  }

  async nodeStatus(node: string, o?: CallOptions): Promise<NodeStatus> {
    const data = await this.#get({ path: '/nodes/{node}/status', pathParams: { node }, ...callOpts(o) })
    return decodeWith('GET /nodes/{node}/status', () => decodeNodeStatus(data))
  }

  async clusterResources(type?: 'vm' | 'storage' | 'node', o?: CallOptions): Promise<ClusterResource[]> {
    const data = await this.#get({ path: '/cluster/resources', ...(type ? { query: { type } } : {}), ...callOpts(o) })
    return decodeWith('GET /cluster/resources', () => decodeClusterResources(data))
  }

  /** `GET /cluster/nextid`: a free vmid (PVE does not reserve it). With `vmid`: that id if free, else PVE_ALREADY_EXISTS. */
  async nextId(vmid?: number, o?: CallOptions): Promise<number> {
    const data = await this.#get({
      path: '/cluster/nextid',
      ...(vmid !== undefined ? { query: { vmid } } : {}),
      ...callOpts(o),
    })
    return decodeWith('GET /cluster/nextid', () => toInt(data, 'nextid'))
  }

  /**
   * Whether `vmid` is free on the whole cluster. PVE::API2::Cluster nextid checks the cluster's full vmlist
   * (any user may ask), so this also sees guests the caller has no `VM.Audit` on: `false` when PVE answers that
   * the vmid already exists.
   */
  async vmidFree(vmid: number, o?: CallOptions): Promise<boolean> {
    try {
      await this.nextId(vmid, o)
      return true
    } catch (error) {
      if (error instanceof PveError && error.code === 'PVE_ALREADY_EXISTS') return false
      throw error
    }
  }

  /** The guests on one node, sorted by vmid. Their `status` does not lag like `/cluster/resources`. `full` (qemu) adds `qmpstatus`. */
  async listGuests(
    node: string,
    type: GuestType,
    options?: { full?: boolean } & CallOptions,
  ): Promise<GuestListItem[]> {
    const data = await this.#get({
      path: `/nodes/{node}/${guestType(type)}`,
      pathParams: { node },
      ...(options?.full && type === 'qemu' ? { query: { full: true } } : {}),
      ...callOpts(options),
    })
    return decodeWith(`GET /nodes/{node}/${type}`, () => decodeGuestList(data, type))
  }

  /** The planner's `LiveReader.nodeGuests`: `listGuests` with `qmpstatus` for qemu (so `paused` is visible). */
  nodeGuests(node: string, type: GuestType, o?: CallOptions): Promise<GuestListItem[]> {
    return this.listGuests(node, type, { ...o, full: true })
  }

  /** Config values in PVE's string form plus `digest`. `current: true` = applied values only (no pending). */
  async guestConfig(
    node: string,
    type: GuestType,
    vmid: number,
    options?: { current?: boolean } & CallOptions,
  ): Promise<GuestConfig> {
    const data = await this.#get({
      path: `/nodes/{node}/${guestType(type)}/{vmid}/config`,
      pathParams: { node, vmid },
      ...(options?.current ? { query: { current: true } } : {}),
      ...callOpts(options),
    })
    return decodeWith(`GET /nodes/{node}/${type}/{vmid}/config`, () => decodeGuestConfig(data))
  }

  async guestPending(node: string, type: GuestType, vmid: number, o?: CallOptions): Promise<PendingEntry[]> {
    const data = await this.#get({
      path: `/nodes/{node}/${guestType(type)}/{vmid}/pending`,
      pathParams: { node, vmid },
      ...callOpts(o),
    })
    return decodeWith(`GET /nodes/{node}/${type}/{vmid}/pending`, () => decodePending(data))
  }

  /**
   * `GET .../migrate` (VM.Migrate): PVE's precondition check for moving the guest (qemu-server
   * migrate_vm_precondition; pve-container's exists on PVE 9 only). Read at observe time, never a write.
   */
  async migratePrecondition(
    node: string,
    type: GuestType,
    vmid: number,
    o?: CallOptions,
  ): Promise<MigratePrecondition> {
    const path = `/nodes/{node}/${guestType(type)}/{vmid}/migrate`
    const data = await this.#get({ path, pathParams: { node, vmid }, ...callOpts(o) })
    return decodeWith(`GET ${path}`, () => decodeMigratePrecondition(data))
  }

  /** The guest firewall: options, rules, aliases and IP sets with their entries, each section with its digest. */
  guestFirewall(node: string, type: GuestType, vmid: number, o?: CallOptions): Promise<GuestFirewall> {
    return readGuestFirewall((spec) => this.#get({ ...spec, ...callOpts(o) }), node, guestType(type), vmid)
  }

  async guestStatus(node: string, type: GuestType, vmid: number, o?: CallOptions): Promise<GuestStatus> {
    const data = await this.#get({
      path: `/nodes/{node}/${guestType(type)}/{vmid}/status/current`,
      pathParams: { node, vmid },
      ...callOpts(o),
    })
    return decodeWith(`GET /nodes/{node}/${type}/{vmid}/status/current`, () => decodeGuestStatus(data))
  }

  /**
   * `GET /access/permissions?path=`: the privileges this client's user or token holds on one ACL path (for a
   * privilege-separated token, already cut to what its user also has). Any caller may read its own.
   */
  async privileges(path: string, o?: CallOptions): Promise<string[]> {
    const data = await this.#get({ path: '/access/permissions', query: { path }, ...callOpts(o) })
    return decodeWith('GET /access/permissions', () => {
      const privs = obj(data, 'permissions')[path]
      return privs === undefined ? [] : Object.keys(obj(privs, path)).sort()
    })
  }

  /** `GET /cluster/ha/{resources|groups|rules}` (groups exist on PVE 8, rules on PVE 9) */
  async haConfig(object: HaObject, o?: CallOptions): Promise<HaItem[]> {
    const path = `/cluster/ha/${object}`
    const data = await this.#get({ path, ...callOpts(o) })
    return decodeWith(`GET ${path}`, () => decodeHaConfig(data, object))
  }

  /** `GET /cluster/backup` (Sys.Audit on /): the vzdump backup jobs, options as strings. */
  async backupJobs(o?: CallOptions): Promise<BackupJobItem[]> {
    const data = await this.#get({ path: '/cluster/backup', ...callOpts(o) })
    return decodeWith('GET /cluster/backup', () => decodeBackupJobs(data))
  }

  /**
   * `GET /cluster/sdn/{zones|vnets|controllers}?pending=1` (SDN.Audit on each object's path): the objects of the
   * config files and of the running config, with each one's `state` and `pending` keys (pending_config)
   */
  async sdn(kind: Exclude<SdnKind, 'subnets'>, o?: CallOptions): Promise<SdnObject[]> {
    const path = `/cluster/sdn/${kind}`
    const data = await this.#get({ path, query: { pending: 1 }, ...callOpts(o) })
    return decodeWith(`GET ${path}`, () => decodeSdnObjects(data, kind.slice(0, -1)))
  }

  /** `GET /cluster/sdn/vnets/{vnet}/subnets?pending=1`: one vnet's subnets (PVE lists subnets per vnet only) */
  async sdnSubnets(vnet: string, o?: CallOptions): Promise<SdnObject[]> {
    const data = await this.#get({
      path: `/cluster/sdn/vnets/${encodeURIComponent(vnet)}/subnets`,
      query: { pending: 1 },
      ...callOpts(o),
    })
    return decodeWith('GET /cluster/sdn/vnets/{vnet}/subnets', () => decodeSdnObjects(data, 'subnet'))
  }

  /** `GET /nodes/{node}/sdn/zones`: each zone's status there (`pending` until the node reloaded the running config) */
  async sdnZoneStatus(node: string, o?: CallOptions): Promise<SdnZoneStatus[]> {
    const data = await this.#get({ path: `/nodes/${encodeURIComponent(node)}/sdn/zones`, ...callOpts(o) })
    return decodeWith('GET /nodes/{node}/sdn/zones', () => decodeSdnZoneStatus(data))
  }

  /**
   * `GET /storage` (PVE::API2::Storage::Config index): every storage.cfg section the caller may audit
   * (Datastore.Audit or Datastore.AllocateSpace on /storage/<id>), one request for all; no secret is ever in it.
   */
  async storageConfigs(o?: CallOptions): Promise<StorageConfigItem[]> {
    const data = await this.#get({ path: '/storage', ...callOpts(o) })
    return decodeWith('GET /storage', () => decodeStorageConfigs(data))
  }

  /** `GET /cluster/options` (Sys.Audit on / for every option): datacenter.cfg, every option as a string */
  async clusterOptions(o?: CallOptions): Promise<Record<string, string>> {
    const data = await this.#get({ path: '/cluster/options', ...callOpts(o) })
    return decodeWith('GET /cluster/options', () => decodeClusterOptions(data))
  }

  /** `GET /pools`: the pools the caller may audit (`Pool.Audit` on `/pool/<id>`), sorted by id */
  async pools(o?: CallOptions): Promise<PoolInfo[]> {
    const data = await this.#get({ path: '/pools', ...callOpts(o) })
    return decodeWith('GET /pools', () => decodePools(data))
  }

  /**
   * `GET /pools?poolid=` (the form nested ids need): the pool's comment and its members that still exist,
   * guests whatever the caller may see of them (read_pool checks `Pool.Audit` only).
   */
  async pool(poolid: string, o?: CallOptions): Promise<PoolDetail> {
    const data = await this.#get({ path: '/pools', query: { poolid }, ...callOpts(o) })
    return decodeWith('GET /pools?poolid', () => decodePoolDetail(data))
  }

  /** `GET /access/users?full=1` (API2::User index): every user the caller may see, with groups and tokens */
  async accessUsers(o?: CallOptions): Promise<AccessUser[]> {
    const data = await this.#get({ path: '/access/users', query: { full: 1 }, ...callOpts(o) })
    return decodeWith('GET /access/users', () => decodeAccessUsers(data))
  }

  /** `GET /access/groups` (API2::Group index) */
  async accessGroups(o?: CallOptions): Promise<AccessGroup[]> {
    const data = await this.#get({ path: '/access/groups', ...callOpts(o) })
    return decodeWith('GET /access/groups', () => decodeAccessGroups(data))
  }

  /** `GET /access/roles` (API2::Role index): built-in roles are `special`; Administrator holds every privilege */
  async accessRoles(o?: CallOptions): Promise<AccessRole[]> {
    const data = await this.#get({ path: '/access/roles', ...callOpts(o) })
    return decodeWith('GET /access/roles', () => decodeAccessRoles(data))
  }

  /** `GET /access/acl` (API2::ACL read_acl): the entries on the paths the caller may audit */
  async acl(o?: CallOptions): Promise<AclEntry[]> {
    const data = await this.#get({ path: '/access/acl', ...callOpts(o) })
    return decodeWith('GET /access/acl', () => decodeAcl(data))
  }

  /** `GET /access/domains` (API2::Domains index): the realms */
  async realms(o?: CallOptions): Promise<RealmInfo[]> {
    const data = await this.#get({ path: '/access/domains', ...callOpts(o) })
    return decodeWith('GET /access/domains', () => decodeRealms(data))
  }

  /** `GET .../snapshot`: the guest's snapshots (VM.Audit), without PVE's `current` pseudo-entry */
  async snapshots(node: string, type: GuestType, vmid: number, o?: CallOptions): Promise<SnapshotInfo[]> {
    const path = `/nodes/{node}/${guestType(type)}/{vmid}/snapshot`
    const data = await this.#get({ path, pathParams: { node, vmid }, ...callOpts(o) })
    return decodeWith(`GET ${path}`, () => decodeSnapshots(data))
  }

  async storages(node: string, o?: CallOptions): Promise<StorageInfo[]> {
    const data = await this.#get({ path: '/nodes/{node}/storage', pathParams: { node }, ...callOpts(o) })
    return decodeWith('GET /nodes/{node}/storage', () => decodeStorages(data))
  }

  async storageContent(
    node: string,
    storage: string,
    content?: string,
    o?: CallOptions,
  ): Promise<StorageContentItem[]> {
    const data = await this.#get({
      path: '/nodes/{node}/storage/{storage}/content',
      pathParams: { node, storage },
      ...(content ? { query: { content } } : {}),
      ...callOpts(o),
    })
    return decodeWith('GET /nodes/{node}/storage/{storage}/content', () => decodeStorageContent(data))
  }

  taskStatus(task: TaskRef, o?: CallOptions): Promise<TaskStatus> {
    return taskStatus(this.#get, task, o?.signal)
  }

  taskLog(task: TaskRef, options?: { start?: number; limit?: number } & CallOptions): Promise<TaskLogPage> {
    return taskLog(this.#get, task, options)
  }

  /** Polls a task until it stops (reads only). Resolves `ok: false` for a failed task; rejects on timeout. */
  waitTask(task: TaskRef, options?: WaitOptions): Promise<TaskResult> {
    return waitTask(this.#get, task, options)
  }

  /** Like waitTask, but a failed task rejects with PVE_TASK_FAILED (exit status, last log lines, `reason`). */
  async waitTaskOk(task: TaskRef, options?: WaitOptions): Promise<TaskResult> {
    return assertTaskOk(await waitTask(this.#get, task, options))
  }

  /**
   * LXC `POST .../template` answers null although PVE converts in a background worker: poll the config until it
   * shows `template: 1` and no `lock`. Works for qemu too.
   */
  async waitTemplate(node: string, type: GuestType, vmid: number, options: WaitOptions = {}): Promise<void> {
    const { timeoutMs = 10 * 60_000, pollIntervalMs = 1_000, signal } = options
    const started = Date.now()
    for (;;) {
      const cfg = await this.guestConfig(node, type, vmid, signal ? { signal } : {})
      if (cfg.values.template === '1' && cfg.values.lock === undefined) return
      if (Date.now() - started >= timeoutMs) {
        const err = new PveTaskTimeoutError(
          'PVE_TASK_TIMEOUT',
          `${type} ${vmid} on ${node} is not a template after ${timeoutMs} ms`,
        )
        err.lastStatus = cfg.values.lock === undefined ? 'not a template' : `locked (${cfg.values.lock})`
        throw err
      }
      if (signal?.aborted) throw abortedError(signal)
      await sleep(pollIntervalMs, signal)
    }
  }
}

/** Where a call returns a UPID (or null for PVE's synchronous variants). */
function taskRef(node: string, data: unknown, what: string, allowNull: true): TaskRef | null
function taskRef(node: string, data: unknown, what: string, allowNull?: false): TaskRef
function taskRef(node: string, data: unknown, what: string, allowNull = false): TaskRef | null {
  if (data === null && allowNull) return null
  if (!isUpid(data))
    throw new PveError(
      'PVE_PROTOCOL',
      `${what}: expected a task id (UPID), got ${data === null ? 'null' : typeof data}`,
    )
  return { node, upid: data }
}

/**
 * The full client: every read plus the writes ProxOps needs (the planner's `LiveReader` + `PveWriter`).
 * Writes are never retried by the client; use `retryOnLockTimeout` where repeating is known to be safe.
 */
export class PveClient extends PveReadOnlyClient {
  readonly #transport: Transport

  /** @internal use createPveClient() */
  constructor(transport: Transport) {
    super(transport.get, () => transport.close())
    this.#transport = transport
  }

  /** Write requests sent so far (POST/PUT/DELETE, logins excluded), whatever their outcome. */
  get writes(): number {
    return this.#transport.writes
  }

  /** A view with reads only, sharing this client's connections, auth and in-flight limit. */
  readOnly(): PveReadOnlyClient {
    return new PveReadOnlyClient(this.#transport.get, async () => {})
  }

  #write(
    method: Exclude<Method, 'GET'>,
    path: string,
    pathParams: CallSpec['pathParams'],
    params: Params | undefined,
    o?: CallOptions,
  ) {
    // PVE reads DELETE parameters from the query string only (a body gives 501).
    const where = method === 'DELETE' ? { query: params } : { body: params ?? {} }
    return this.#transport.call({ method, path, ...(pathParams ? { pathParams } : {}), ...where, ...callOpts(o) })
  }

  /**
   * Escape hatch for writes without a typed method (`POST /nodes/{node}/qemu/{vmid}/status/suspend`, ...):
   * returns PVE's `data` undecoded. Counted as a write; never retried.
   */
  request(
    method: 'POST' | 'PUT' | 'DELETE',
    path: string,
    options?: { pathParams?: Readonly<Record<string, string | number>>; params?: PveParams } & CallOptions,
  ): Promise<unknown> {
    return this.#write(method, path, options?.pathParams, options?.params, options)
  }

  /** One synchronous guest firewall write (options, a rule, an alias, an IP set or entry); see firewall.ts. */
  async firewallWrite(
    node: string,
    type: GuestType,
    vmid: number,
    write: FirewallWrite,
    o?: CallOptions,
  ): Promise<void> {
    const c = firewallCall(node, guestType(type), vmid, write)
    await this.#write(c.method, c.path, c.pathParams, c.params, o)
  }

  /** POST /nodes/{node}/qemu|lxc (qmcreate / vzcreate); params include `vmid`. */
  async createGuest(node: string, type: GuestType, params: PveParams, o?: CallOptions): Promise<TaskRef> {
    const path = `/nodes/{node}/${guestType(type)}`
    return taskRef(node, await this.#write('POST', path, { node }, params, o), `POST ${path}`)
  }

  /** POST .../{vmid}/clone; params include `newid` (and `target`, `full`, `storage`, `name` / `hostname`). */
  async cloneGuest(node: string, type: GuestType, vmid: number, params: PveParams, o?: CallOptions): Promise<TaskRef> {
    const path = `/nodes/{node}/${guestType(type)}/{vmid}/clone`
    return taskRef(node, await this.#write('POST', path, { node, vmid }, params, o), `POST ${path}`)
  }

  /**
   * Writes config. qemu: async `POST .../config` (a task), or the synchronous PUT with `sync: true` (null);
   * lxc: PUT (null). `digest` makes PVE refuse the write (PVE_DIGEST_MISMATCH) if the config changed since it was read.
   */
  async updateConfig(
    node: string,
    type: GuestType,
    vmid: number,
    params: PveParams,
    options?: { digest?: string; sync?: boolean } & CallOptions,
  ): Promise<TaskRef | null> {
    const sync = guestType(type) === 'lxc' || options?.sync === true
    const path = `/nodes/{node}/${type}/{vmid}/config`
    const body = { ...params, ...(options?.digest ? { digest: options.digest } : {}) }
    const data = await this.#write(sync ? 'PUT' : 'POST', path, { node, vmid }, body, options)
    return taskRef(node, data, `${sync ? 'PUT' : 'POST'} ${path}`, true)
  }

  /** PUT .../resize; `size` like `+2G` (grow by) or `40G` (grow to). A task since PVE 8 (null before). */
  async resizeDisk(
    node: string,
    type: GuestType,
    vmid: number,
    disk: string,
    size: string,
    options?: { digest?: string } & CallOptions,
  ): Promise<TaskRef | null> {
    const path = `/nodes/{node}/${guestType(type)}/{vmid}/resize`
    const body = { disk, size, ...(options?.digest ? { digest: options.digest } : {}) }
    return taskRef(node, await this.#write('PUT', path, { node, vmid }, body, options), `PUT ${path}`, true)
  }

  async start(node: string, type: GuestType, vmid: number, o?: CallOptions): Promise<TaskRef> {
    return this.#power(node, type, vmid, 'start', {}, o)
  }

  /** Graceful shutdown; with `forceStop` PVE stops the guest when `timeoutSeconds` passes. */
  async shutdown(
    node: string,
    type: GuestType,
    vmid: number,
    options?: { timeoutSeconds?: number; forceStop?: boolean } & CallOptions,
  ): Promise<TaskRef> {
    const params: Record<string, number | boolean> = {}
    if (options?.timeoutSeconds !== undefined) params.timeout = options.timeoutSeconds
    if (options?.forceStop !== undefined) params.forceStop = options.forceStop
    return this.#power(node, type, vmid, 'shutdown', params, options)
  }

  async stop(node: string, type: GuestType, vmid: number, o?: CallOptions): Promise<TaskRef> {
    return this.#power(node, type, vmid, 'stop', {}, o)
  }

  /** Reboot through the API (applies pending qemu changes; a reboot inside the guest does not). */
  async reboot(node: string, type: GuestType, vmid: number, o?: CallOptions): Promise<TaskRef> {
    return this.#power(node, type, vmid, 'reboot', {}, o)
  }

  async #power(
    node: string,
    type: GuestType,
    vmid: number,
    action: string,
    params: Params,
    o?: CallOptions,
  ): Promise<TaskRef> {
    const path = `/nodes/{node}/${guestType(type)}/{vmid}/status/${action}`
    return taskRef(node, await this.#write('POST', path, { node, vmid }, params, o), `POST ${path}`)
  }

  /**
   * `POST .../migrate` (VM.Migrate): a `qmigrate` / `vzmigrate` task, or for an HA-managed guest a `hamigrate`
   * task that hands the move to HA. qemu takes `target`, `online`, `with-local-disks`, `targetstorage`; lxc takes
   * `target`, `restart`, `target-storage`.
   */
  async migrateGuest(
    node: string,
    type: GuestType,
    vmid: number,
    params: PveParams,
    o?: CallOptions,
  ): Promise<TaskRef> {
    const path = `/nodes/{node}/${guestType(type)}/{vmid}/migrate`
    return taskRef(node, await this.#write('POST', path, { node, vmid }, params, o), `POST ${path}`)
  }

  /**
   * Moves one volume of a guest to `storage`: `POST .../qemu/{vmid}/move_disk` (`disk`, a `qmmove` task; a running
   * VM's disk is mirrored online) or `POST .../lxc/{vmid}/move_volume` (`volume`, a `move_volume` task; the container
   * must be stopped). With `delete` PVE frees the source volume once the copy is in the config, else it stays as
   * an `unusedN` entry (qemu-server move_vm_disk, pve-container move_volume).
   */
  async moveDisk(
    node: string,
    type: GuestType,
    vmid: number,
    disk: string,
    storage: string,
    options?: { delete?: boolean; digest?: string } & CallOptions,
  ): Promise<TaskRef> {
    const path = `/nodes/{node}/${guestType(type)}/{vmid}/${type === 'qemu' ? 'move_disk' : 'move_volume'}`
    const body = {
      [type === 'qemu' ? 'disk' : 'volume']: disk,
      storage,
      ...(options?.delete ? { delete: 1 } : {}),
      ...(options?.digest ? { digest: options.digest } : {}),
    }
    return taskRef(node, await this.#write('POST', path, { node, vmid }, body, options), `POST ${path}`)
  }

  /**
   * POST .../template: qemu-server answers its worker's UPID. pve-container forks a `vztemplate` worker too but
   * answers null (PVE::API2::LXC `template`); that worker is looked up in the node's active task list and returned,
   * so it is waited on like any task. Null when it is not listed there (or the list cannot be read): then poll the
   * config (`waitTemplate`).
   */
  async markTemplate(node: string, type: GuestType, vmid: number, o?: CallOptions): Promise<TaskRef | null> {
    const path = `/nodes/{node}/${guestType(type)}/{vmid}/template`
    const answer = taskRef(node, await this.#write('POST', path, { node, vmid }, {}, o), `POST ${path}`, true)
    return answer ?? (type === 'lxc' ? this.#forkedWorker(node, 'vztemplate', vmid, o) : null)
  }

  /**
   * The worker a call forked without answering its UPID. PVE lists it among the node's active tasks by the time the
   * call answers: pve-common's RESTEnvironment `fork_worker` adds it (`active_workers`) before it returns. Only one
   * such worker of a guest can run at a time (they hold the guest's config lock), so the first listed is this one.
   */
  async #forkedWorker(node: string, type: string, vmid: number, o?: CallOptions): Promise<TaskRef | null> {
    try {
      const list = await this.get('/nodes/{node}/tasks', {
        pathParams: { node },
        query: { source: 'active', typefilter: type, vmid },
        ...(o ?? {}),
      })
      const upid = Array.isArray(list)
        ? list.map((t) => (t as { upid?: unknown } | null)?.upid).find((u): u is string => isUpid(u))
        : undefined
      return upid !== undefined ? { node, upid } : null
    } catch {
      // the conversion was started: a caller that cannot find the worker waits on the config instead
      return null
    }
  }

  /**
   * `POST .../snapshot` (qemu-server / pve-container `snapshot`, VM.Snapshot): a task. `snapname` is a
   * pve-configid of at most 40 characters; PVE refuses `current` (and `pending`, `vzdump`) and a used name.
   */
  async createSnapshot(
    node: string,
    type: GuestType,
    vmid: number,
    snapname: string,
    options?: { description?: string } & CallOptions,
  ): Promise<TaskRef> {
    const path = `/nodes/{node}/${guestType(type)}/{vmid}/snapshot`
    const body = { snapname, ...(options?.description !== undefined ? { description: options.description } : {}) }
    return taskRef(node, await this.#write('POST', path, { node, vmid }, body, options), `POST ${path}`)
  }

  /** `DELETE .../snapshot/{snapname}` (`delsnapshot`, VM.Snapshot): a task; never `force`. */
  async deleteSnapshot(
    node: string,
    type: GuestType,
    vmid: number,
    snapname: string,
    o?: CallOptions,
  ): Promise<TaskRef> {
    const path = `/nodes/{node}/${guestType(type)}/{vmid}/snapshot/{snapname}`
    return taskRef(node, await this.#write('DELETE', path, { node, vmid, snapname }, undefined, o), `DELETE ${path}`)
  }

  /**
   * DELETE /nodes/{node}/qemu|lxc/{vmid} with `purge=1` (the vmid leaves backup and replication jobs and HA, so a
   * later guest with that vmid inherits none of them). Never `destroy-unreferenced-disks`: PVE would delete every
   * `vm-<vmid>-*` volume on every storage, also another cluster's on a shared one (docs/safety.md).
   */
  async deleteGuest(node: string, type: GuestType, vmid: number, options?: CallOptions): Promise<TaskRef> {
    const path = `/nodes/{node}/${guestType(type)}/{vmid}`
    return taskRef(node, await this.#write('DELETE', path, { node, vmid }, { purge: true }, options), `DELETE ${path}`)
  }

  /**
   * `POST /cluster/ha/{object}` (the id travels in `params`), `PUT` / `DELETE /cluster/ha/{object}/{id}`.
   * Synchronous (no task); `digest` makes a PUT fail when the section config changed since it was read.
   */
  async haWrite(
    object: HaObject,
    method: 'POST' | 'PUT' | 'DELETE',
    id: string,
    params: PveParams,
    options?: { digest?: string } & CallOptions,
  ): Promise<void> {
    const body = { ...params, ...(options?.digest ? { digest: options.digest } : {}) }
    if (method === 'POST') await this.#write('POST', `/cluster/ha/${object}`, undefined, body, options)
    else await this.#write(method, `/cluster/ha/${object}/{id}`, { id }, body, options)
  }

  /** POST /cluster/backup (create_job, synchronous): `id`, `schedule`, the selection and the job options. */
  async createBackupJob(params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('POST', '/cluster/backup', undefined, params, o)
  }

  /** PUT /cluster/backup/{id} (update_job): changed options, `delete` for options to remove. */
  async updateBackupJob(id: string, params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('PUT', '/cluster/backup/{id}', { id }, params, o)
  }

  /** DELETE /cluster/backup/{id} (delete_job). */
  async deleteBackupJob(id: string, o?: CallOptions): Promise<void> {
    await this.#write('DELETE', '/cluster/backup/{id}', { id }, undefined, o)
  }

  /** PUT /cluster/options (set_options, synchronous): the options given, `delete` for the ones to remove */
  async setClusterOptions(params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('PUT', '/cluster/options', undefined, params, o)
  }

  /**
   * POST /storage (PVE::API2::Storage::Config create, synchronous): `storage`, `type` and the options. The answer
   * may carry the PBS encryption key (`config`): it is dropped here, never returned nor logged.
   */
  async createStorage(params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('POST', '/storage', undefined, params, o)
  }

  /** PUT /storage/{storage} (update): changed options, `delete`, `digest`; never a fixed option (check_config). */
  async updateStorage(storage: string, params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('PUT', '/storage/{storage}', { storage }, params, o)
  }

  /** DELETE /storage/{storage}: removes the section only; the volumes stay where they are, unreachable by PVE. */
  async deleteStorage(storage: string, o?: CallOptions): Promise<void> {
    await this.#write('DELETE', '/storage/{storage}', { storage }, undefined, o)
  }

  /**
   * `/pools` (PVE::API2::Pool create_pool, update_pool, delete_pool), the non-deprecated forms with the id in
   * `poolid` (nested ids cannot be path segments); synchronous, no task. 8.4 and 9.x serve the same API.
   */
  async createPool(params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('POST', '/pools', undefined, params, o)
  }
  /** `vms` with `delete=1` removes members, with `allow-move=1` takes them from another pool */
  async updatePool(params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('PUT', '/pools', undefined, params, o)
  }
  /**
   * SDN object writes (pve-network's Zones, Vnets, Subnets, Controllers create/update/delete): synchronous edits
   * of the config files, which stay pending until `applySdn`. `path` is below `/cluster/sdn`
   * (`zones`, `vnets/web`, `vnets/web/subnets`, `vnets/web/subnets/lab-10.0.0.0-24`).
   */
  async sdnWrite(method: 'POST' | 'PUT' | 'DELETE', path: string, params: PveParams, o?: CallOptions): Promise<void> {
    const full = `/cluster/sdn/${path.split('/').map(encodeURIComponent).join('/')}`
    await this.#write(method, full, undefined, method === 'DELETE' ? undefined : params, o)
  }

  /** `PUT /cluster/sdn` (reload): the config files become the running config; a `reloadnetworkall` task */
  async applySdn(o?: CallOptions): Promise<TaskRef> {
    const data = await this.#write('PUT', '/cluster/sdn', undefined, {}, o)
    if (!isUpid(data)) throw new PveError('PVE_PROTOCOL', 'PUT /cluster/sdn: expected a task id (UPID)')
    return { node: parseUpid(data).node, upid: data }
  }

  /** refused by PVE while the pool has a sub-pool or an existing member */
  async deletePool(poolid: string, o?: CallOptions): Promise<void> {
    await this.#write('DELETE', '/pools', undefined, { poolid }, o)
  }

  /**
   * `/access` writes (pve-access-control API2::User, Group, Role, ACL): synchronous, user.cfg under its lock.
   */
  async createUser(params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('POST', '/access/users', undefined, params, o)
  }
  async updateUser(userid: string, params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('PUT', '/access/users/{userid}', { userid }, params, o)
  }
  /** delete_user also removes its tokens, group memberships and ACL entries */
  async deleteUser(userid: string, o?: CallOptions): Promise<void> {
    await this.#write('DELETE', '/access/users/{userid}', { userid }, undefined, o)
  }
  async createGroup(params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('POST', '/access/groups', undefined, params, o)
  }
  async updateGroup(groupid: string, params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('PUT', '/access/groups/{groupid}', { groupid }, params, o)
  }
  /** delete_group also removes the group's ACL entries (delete_group_acl) */
  async deleteGroup(groupid: string, o?: CallOptions): Promise<void> {
    await this.#write('DELETE', '/access/groups/{groupid}', { groupid }, undefined, o)
  }
  async createRole(params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('POST', '/access/roles', undefined, params, o)
  }
  async updateRole(roleid: string, params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('PUT', '/access/roles/{roleid}', { roleid }, params, o)
  }
  async deleteRole(roleid: string, o?: CallOptions): Promise<void> {
    await this.#write('DELETE', '/access/roles/{roleid}', { roleid }, undefined, o)
  }
  /**
   * `POST /access/users/{userid}/token/{tokenid}` (generate_token): the secret comes back this once, held in a
   * `Secret` so that no log, error or JSON output can print it.
   */
  async createToken(userid: string, tokenid: string, params: PveParams, o?: CallOptions): Promise<NewToken> {
    const data = await this.#write('POST', '/access/users/{userid}/token/{tokenid}', { userid, tokenid }, params, o)
    const t = decodeWith('POST /access/users/{userid}/token/{tokenid}', () => decodeNewToken(data))
    return { fullTokenid: t.fullTokenid, value: new Secret(t.value) }
  }
  async updateToken(userid: string, tokenid: string, params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('PUT', '/access/users/{userid}/token/{tokenid}', { userid, tokenid }, params, o)
  }
  async deleteToken(userid: string, tokenid: string, o?: CallOptions): Promise<void> {
    await this.#write('DELETE', '/access/users/{userid}/token/{tokenid}', { userid, tokenid }, undefined, o)
  }
  /** `PUT /access/acl` (update_acl): `roles` granted to `users`/`groups`/`tokens` on `path`; `delete=1` removes them */
  async updateAcl(params: PveParams, o?: CallOptions): Promise<void> {
    await this.#write('PUT', '/access/acl', undefined, params, o)
  }

  /** POST /nodes/{node}/storage/{storage}/download-url (`url`, `filename`, `content`, optional checksum pair). */
  async downloadUrl(node: string, storage: string, params: PveParams, o?: CallOptions): Promise<TaskRef> {
    const path = '/nodes/{node}/storage/{storage}/download-url'
    return taskRef(node, await this.#write('POST', path, { node, storage }, params, o), `POST ${path}`)
  }
}

/** The full client (reads and writes). Call `close()` when done. */
export function createPveClient(options: PveClientOptions): PveClient {
  return new PveClient(new Transport(options))
}

/** A client that can only read, for diff / status / adopt. Call `close()` when done. */
export function createPveReadOnlyClient(options: PveClientOptions): PveReadOnlyClient {
  const transport = new Transport(options)
  return new PveReadOnlyClient(transport.get, () => transport.close())
}
