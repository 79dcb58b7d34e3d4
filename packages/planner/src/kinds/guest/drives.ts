/**
 * What a qemu drive value is, read once for plan, adopt, the boot order and the disruption
 * classes: a disk, a CD drive, or the cloud-init drive (qemu-server's parse_drive, drive_is_cdrom and
 * drive_is_cloudinit), the manifest's cloud-init and CD drives on the slots the schema gives them
 * (`CLOUD_INIT_SLOT`, `cdSlot`), and the boot order over the drives (`boot: order=`).
 */
import { CLOUD_INIT_SLOT, cdSlot, type VmHardware } from '@proxops/schema'
import { anomaly, NONE, parsePS, write, type Outcome, type Owned } from './fields.js'
import type { GuestBuildContext } from './qemu.js'
import { isEmptySlot, poolOf } from './volumes.js'

/**
 * `cloud-init`: the volume is a cloud-init image (whatever the media); `cdrom`: `media=cdrom` with an ISO, the
 * host's drive (`cdrom`) or no medium (`none`); `disk`: anything else.
 */
export type DriveKind = 'disk' | 'cdrom' | 'cloud-init'

export interface Drive {
  kind: DriveKind
  /** the volume (`local:iso/x.iso`, `local-lvm:vm-100-cloudinit`, `none`) */
  file: string
  /** every token, the volume as `file` */
  props: Record<string, string>
}

/** drive_is_cloudinit: `<storage>:cloudinit` (the create form) or `vm-<id>-cloudinit[.<format>]`. */
const CLOUD_INIT_VOLUME = /[:/](?:vm-\d+-)?cloudinit(?:\.(?:raw|qcow|qcow2|qed|vmdk|cloop))?$/

/** A drive value read through PVE's property-string grammar; undefined when it is not one or has no volume. */
export function readDrive(value: string): Drive | undefined {
  const props = parsePS(value, 'file')
  const file = props?.file
  if (props === undefined || file === undefined) return undefined
  const kind: DriveKind = CLOUD_INIT_VOLUME.test(file) ? 'cloud-init' : props.media === 'cdrom' ? 'cdrom' : 'disk'
  return { kind, file, props }
}

/** drive_is_cdrom (the cloud-init drive included, as resolve_first_disk and change_medium see it). */
export const isCdrom = (value: string | undefined): boolean =>
  value !== undefined && readDrive(value)?.props.media === 'cdrom'

/** drive_is_cloudinit. */
export const isCloudInit = (value: string | undefined): boolean =>
  value !== undefined && readDrive(value)?.kind === 'cloud-init'

/**
 * plan: the manifest's cloud-init drive and CD drive. A slot holding something else is never replaced (an
 * anomaly); a clone keeps the cloud-init drive it inherited.
 */
export function cdAndCloudInitOwned(
  hw: Partial<VmHardware>,
  ctx: Pick<GuestBuildContext, 'volid' | 'cloned'>,
): Owned[] {
  const owned: Owned[] = []
  const ci = hw['cloud-init']?.enabled === true ? hw['cloud-init'] : undefined
  if (ci?.storage !== undefined) owned.push(cloudInitOwned(ci.storage, ctx.cloned))
  const cd = hw.cdrom
  if (cd !== undefined) {
    const slot = cdSlot(ci !== undefined)
    if (cd.iso === 'none') {
      const value = 'none,media=cdrom'
      owned.push({
        key: slot,
        field: 'spec.hardware.cdrom',
        create: value,
        compare: (live) => (isEmptySlot(live) ? NONE : cdCheck(slot, live as string, () => [write(value)])),
      })
    } else {
      const vol = ctx.volid('ISO', cd.iso) ?? `local:iso/${cd.iso}`
      const value = `${vol},media=${cd.media}`
      owned.push({
        key: slot,
        field: 'spec.hardware.cdrom',
        create: value,
        compare: (live) => {
          if (isEmptySlot(live)) return [write(value, value, true)]
          const p = readDrive(live as string)?.props
          if (p?.file === vol && (p.media ?? 'disk') === cd.media) return NONE
          return cdCheck(slot, live as string, () => [write(value)])
        },
      })
    }
  }
  return owned
}

function cloudInitOwned(storage: string, cloned: boolean): Owned {
  const create = `${storage}:cloudinit`
  return {
    key: CLOUD_INIT_SLOT,
    field: 'spec.hardware.cloud-init',
    create,
    compare: (live) => {
      if (isEmptySlot(live)) return [write(create, create, true)]
      const drive = readDrive(live as string)
      if (drive?.kind !== 'cloud-init') {
        return [
          anomaly(
            'volume-kind',
            `${CLOUD_INIT_SLOT} holds ${drive?.file ?? ''} on PVE but spec.hardware.cloud-init claims it for the cloud-init drive; proxops will not replace it`,
          ),
        ]
      }
      const pool = poolOf(drive.file)
      if (pool === storage) return NONE
      if (cloned) {
        return [
          anomaly(
            'volume-pool',
            `${CLOUD_INIT_SLOT}: the cloned cloud-init drive is on ${pool ?? '?'} but spec.hardware.cloud-init.storage is ${storage}; proxops keeps the inherited drive`,
          ),
        ]
      }
      return [write(create)]
    },
  }
}

/**
 * A CD value may replace what the slot holds only when that is a CD drive: not a disk, and not the cloud-init
 * drive (drive_is_cdrom counts it too; a clone of a template with one on ide2 has it there).
 */
function cdCheck(slot: string, live: string, then: () => readonly Outcome[]): readonly Outcome[] {
  const drive = readDrive(live)
  if (!drive) return [anomaly('invalid-live', `${slot}: cannot read PVE's value; proxops will not replace it`)]
  if (drive.kind === 'cloud-init') {
    return [
      anomaly(
        'volume-kind',
        `${slot} holds the cloud-init drive (${drive.file}) on PVE, not a CD/DVD; proxops will not replace it (declare spec.hardware.cloud-init to keep it there and put the CD on ${cdSlot(true)})`,
      ),
    ]
  }
  if (drive.props.media !== 'cdrom') {
    return [
      anomaly('volume-kind', `${slot} holds a disk (${drive.file}) on PVE, not a CD/DVD; proxops will not replace it`),
    ]
  }
  return then()
}

/** qemu-server's drive keys in the order it picks a boot disk (valid_drive_names_for_boot). */
const BOOT_DRIVES: readonly string[] = [
  ...Array.from({ length: 4 }, (_, i) => `ide${i}`),
  ...Array.from({ length: 31 }, (_, i) => `scsi${i}`),
  ...Array.from({ length: 16 }, (_, i) => `virtio${i}`),
  ...Array.from({ length: 6 }, (_, i) => `sata${i}`),
]

/** The NIC keys in the order qemu-server looks for the first one. */
const NET_KEYS: readonly string[] = Array.from({ length: 32 }, (_, i) => `net${i}`)

/** The drives of `config` qemu-server can boot from, each read once, in its boot-disk order. */
function bootDrives(config: Readonly<Record<string, string>>): Map<string, Drive | undefined> {
  const out = new Map<string, Drive | undefined>()
  for (const k of BOOT_DRIVES) {
    const value = config[k]
    if (value) out.set(k, readDrive(value))
  }
  return out
}

/**
 * qemu-server's get_default_bootdevices: the first disk, the first CD drive (a cloud-init drive counts, as
 * resolve_first_disk does not exclude it) and the first NIC; `without`: keys to treat as absent.
 */
export function defaultBootDevices(
  config: Readonly<Record<string, string>>,
  without: ReadonlySet<string> = new Set(),
  drives: ReadonlyMap<string, Drive | undefined> = bootDrives(config),
): string[] {
  let disk: string | undefined
  let cd: string | undefined
  for (const [k, drive] of drives) {
    if (without.has(k)) continue
    if (drive?.props.media === 'cdrom') cd ??= k
    else disk ??= k
  }
  const nic = NET_KEYS.find((k) => Boolean(config[k]) && !without.has(k))
  return [disk, cd, nic].filter((k): k is string => k !== undefined)
}

/**
 * Whether `boot` is what qemu-server writes on its own: create_vm sets `order=` from the default devices
 * when none was given, and update_vm_api appends each CD drive added later (not a cloud-init drive). Any
 * other order (or a legacy boot string) was chosen by someone and is reported when nobody declares it.
 */
export function isDerivedBoot(config: Readonly<Record<string, string>>): boolean {
  const boot = (config.boot ?? '').trim()
  if (boot === '') return true
  const p = parsePS(boot, 'legacy')
  // only `order=`: a legacy string beside it was chosen by someone
  if (p?.order === undefined || Object.keys(p).length !== 1) return false
  const order = orderOf(p.order)
  // every drive is read once for both questions below (a guest has a few, and plan() asks for every guest)
  const drives = bootDrives(config)
  const appended = new Set<string>()
  while (order.length > 0) {
    // drive_is_cdrom and not drive_is_cloudinit (a CD drive is an ide, sata or scsi drive: one of the boot drives)
    const drive = drives.get(order[order.length - 1]!)
    if (drive?.props.media !== 'cdrom' || drive.kind === 'cloud-init') break
    appended.add(order.pop()!)
  }
  const want = defaultBootDevices(config, appended, drives)
  return order.length === want.length && order.every((d, i) => d === want[i])
}

const orderOf = (order: string): string[] => order.split(';').filter((d) => d !== '')

/** The devices of qemu-server's `boot: order=a;b`; undefined for a legacy boot string (`cdn`) or another form. */
export function bootOrderOf(live: string): string[] | undefined {
  const order = parsePS(live, 'legacy')?.order
  return order === undefined ? undefined : orderOf(order)
}

/** plan: `spec.options.boot-order` as qemu-server's `boot: order=...`. */
export function bootOwned(order: readonly string[]): Owned {
  const want = order.join(';')
  const value = `order=${want}`
  return {
    key: 'boot',
    field: 'spec.options.boot-order',
    create: value,
    compare: (live) => (live !== undefined && bootOrderOf(live)?.join(';') === want ? NONE : [write(value)]),
  }
}

type Gap = (field: string, value: string, note: string) => void

/**
 * adopt: the cloud-init and CD drives of a VM's config as `spec.hardware`'s `cloud-init` and `cdrom`, where
 * plan() puts them; every other cloud-init or CD drive is a gap. `claimed` are the drive keys read here (the
 * disk loop skips them); `isoNames` maps an adopted ISO's volume id to its manifest name.
 */
export function adoptCdAndCloudInit(
  config: Readonly<Record<string, string>>,
  driveKeys: readonly string[],
  isoNames: ReadonlyMap<string, string>,
  gap: Gap,
): { hardware: Record<string, unknown>; claimed: Set<string> } {
  const hardware: Record<string, unknown> = {}
  const claimed = new Set<string>()
  const drives = new Map<string, Drive>()
  for (const key of driveKeys) {
    const drive = readDrive(config[key]!)
    if (drive !== undefined && drive.kind !== 'disk') drives.set(key, drive)
  }
  const ci = drives.get(CLOUD_INIT_SLOT)
  const cloudInit = ci?.kind === 'cloud-init'
  const cd = cdSlot(cloudInit)
  for (const [key, drive] of drives) {
    claimed.add(key)
    const value = config[key]!
    if (drive.kind === 'cloud-init') {
      if (key === CLOUD_INIT_SLOT) hardware['cloud-init'] = { enabled: true, storage: poolOf(drive.file) }
      else gap(key, value, `cloud-init drive on a slot other than ${CLOUD_INIT_SLOT} is not modelled`)
    } else if (key !== cd) {
      gap(key, value, `CD drive on ${key} is not modelled (spec.hardware.cdrom is ${cd} here)`)
    } else if (drive.file === 'none') {
      hardware.cdrom = { iso: 'none' }
    } else {
      const iso = isoNames.get(drive.file)
      if (iso !== undefined) hardware.cdrom = { iso }
      else gap(key, value, 'CD medium is not an adopted ISO (the host drive, or not an iso volume on an allowed node)')
    }
  }
  return { hardware, claimed }
}
