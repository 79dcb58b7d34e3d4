import { describe, expect, it } from 'vitest'
import { MigrationLog, moveConfig, parseStorageMap } from './migration.js'
import { GuestConfig } from './config.js'
import type { Guest } from './cluster.js'

describe('AbstractConfig update_volume_ids and move_config_to_node (moveConfig)', () => {
  it('renames each volume once wherever the config names it (drives, unused, pending, snapshots) and moves the guest', () => {
    const conf = new GuestConfig({
      scsi0: 'local-lvm:vm-100-disk-0,size=1G',
      scsi1: 'iothread=1,file=local-zfs:vm-100-disk-0,size=2G',
      unused0: 'local-lvm:vm-100-disk-1',
      ide2: 'local:iso/x.iso,media=cdrom',
    })
    conf.setPending('scsi2', 'local-lvm:vm-100-disk-1,size=3G')
    conf.setSnapshot('before', { scsi0: 'local-lvm:vm-100-disk-0,size=1G' })
    const g = { vmid: 100, node: 'pve1', conf } as Guest
    moveConfig(
      g,
      'pve2',
      new Map([
        ['local-lvm:vm-100-disk-0', 'local-zfs:vm-100-disk-1'],
        ['local-zfs:vm-100-disk-0', 'local-zfs:vm-100-disk-0'],
        ['local-lvm:vm-100-disk-1', 'local-zfs:vm-100-disk-2'],
      ]),
    )
    expect(g.node).toBe('pve2')
    expect(conf.main()).toEqual({
      scsi0: 'local-zfs:vm-100-disk-1,size=1G',
      scsi1: 'iothread=1,file=local-zfs:vm-100-disk-0,size=2G',
      unused0: 'local-zfs:vm-100-disk-2',
      ide2: 'local:iso/x.iso,media=cdrom',
    })
    expect(conf.pending()).toEqual({ scsi2: 'local-zfs:vm-100-disk-2,size=3G' })
    expect(conf.snapshot('before')).toEqual({ scsi0: 'local-zfs:vm-100-disk-1,size=1G' })
  })
})

describe("AbstractMigrate log and the handlers' parse_idmap", () => {
  it("prefixes each line with the node's time, `ERROR:` for errors, and reports the duration as HH:MM:SS", () => {
    const clock = { t: 1_750_000_000_000 }
    const log = new MigrationLog({ now: () => clock.t } as never)
    log.log('info', 'starting\n')
    clock.t += 3_723_000
    log.log('err', 'it broke')
    expect(log.lines).toEqual([
      `${new Date(1_750_000_000_000).toISOString().slice(0, 19).replace('T', ' ')} starting`,
      `${new Date(1_750_003_723_000).toISOString().slice(0, 19).replace('T', ' ')} ERROR: it broke`,
    ])
    expect(log.duration()).toBe('01:02:03')
  })

  it('a map that does not parse is a parameter error of the parameter it came in', () => {
    expect(() => parseStorageMap('aa,bb', 'target-storage')).toThrow(
      expect.objectContaining({
        status: 400,
        errors: { 'target-storage': 'failed to parse storage map: default target ID can only be provided once' },
      }),
    )
    expect(parseStorageMap(undefined, 'targetstorage')).toBeUndefined()
  })
})
