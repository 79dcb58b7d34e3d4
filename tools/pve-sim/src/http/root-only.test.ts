import { describe, expect, it } from 'vitest'
import { rootOnlyViolation } from './root-only.js'
import type { Caller } from '../model/caller.js'

const token: Caller = { userid: 'root@pam', tokenid: 'gitops', actor: 'root@pam!gitops' }
const root: Caller = { userid: 'root@pam', actor: 'root@pam' }
const v = (
  template: string,
  method: string,
  params: Record<string, unknown>,
  caller = token,
  old?: Record<string, string>,
) => {
  const e = rootOnlyViolation({ method, template, params, caller, currentConfig: () => old })
  return e ? { status: e.status, message: e.message, errors: e.errors } : undefined
}

// tokens are never root@pam
describe('root@pam-only rules', () => {
  it('lets root@pam do anything', () => {
    expect(v('/nodes/{node}/qemu/{vmid}/config', 'PUT', { args: '-foo', skiplock: true }, root)).toBeUndefined()
  })

  it('skiplock and keepActive: 400 Only root may use this option.', () => {
    expect(v('/nodes/{node}/qemu/{vmid}/status/stop', 'POST', { skiplock: true })).toEqual({
      status: 400,
      message: 'Parameter verification failed.',
      errors: { skiplock: 'Only root may use this option.' },
    })
    expect(v('/nodes/{node}/qemu/{vmid}/status/shutdown', 'POST', { keepActive: true })?.errors).toEqual({
      keepActive: 'Only root may use this option.',
    })
    expect(v('/nodes/{node}/lxc/{vmid}/status/start', 'POST', { skiplock: false })).toBeUndefined()
  })

  it("qemu options outside every permission group: 500 only root can set '<opt>' config", () => {
    expect(v('/nodes/{node}/qemu/{vmid}/config', 'PUT', { node: 'pve1', vmid: 100, args: '-x' })).toEqual({
      status: 500,
      message: "only root can set 'args' config",
      errors: undefined,
    })
    expect(
      v('/nodes/{node}/qemu', 'POST', { node: 'pve1', vmid: 100, hookscript: 'local:snippets/h.pl' })?.message,
    ).toBe("only root can set 'hookscript' config")
    expect(v('/nodes/{node}/qemu/{vmid}/config', 'POST', { vmgenid: '1' })?.message).toBe(
      "only root can set 'vmgenid' config",
    )
    expect(v('/nodes/{node}/qemu/{vmid}/config', 'PUT', { delete: 'lock' })?.message).toBe(
      "only root can set 'lock' config",
    )
  })

  it('allows the grouped options ProxOps sends', () => {
    const params = {
      node: 'pve1',
      vmid: 100,
      name: 'web',
      memory: '2048',
      cores: 2,
      sockets: 1,
      cpu: 'host',
      ostype: 'l26',
      scsihw: 'virtio-scsi-single',
      agent: '1',
      bios: 'ovmf',
      efidisk0: 'local-lvm:1',
      scsi0: 'local-lvm:0,import-from=local:import/x.qcow2',
      ide2: 'local-lvm:cloudinit',
      net0: 'virtio,bridge=vmbr0',
      ipconfig0: 'ip=dhcp',
      ciuser: 'ops',
      sshkeys: 'x',
      tags: 'a',
      onboot: true,
      boot: 'order=scsi0',
      description: 'd',
      digest: 'abc',
      delete: 'tags,net1',
      pool: 'p',
      storage: 'local-lvm',
      start: true,
    }
    expect(v('/nodes/{node}/qemu', 'POST', params)).toBeUndefined()
  })

  it('absolute paths as drive or import source need root (pve-storage check_volume_access)', () => {
    expect(v('/nodes/{node}/qemu', 'POST', { scsi0: 'local-lvm:0,import-from=/tmp/disk.qcow2' })?.message).toBe(
      'Only root can pass arbitrary filesystem paths. at /usr/share/perl5/PVE/Storage.pm line 651.',
    )
    expect(v('/nodes/{node}/qemu/{vmid}/config', 'PUT', { scsi1: '/dev/sdb' })?.status).toBe(500)
  })

  it('real serial/usb/hostpci devices need root', () => {
    expect(v('/nodes/{node}/qemu/{vmid}/config', 'PUT', { serial0: '/dev/ttyS0' })?.message).toBe(
      "only root can modify 'serial0' config for real devices",
    )
    expect(v('/nodes/{node}/qemu/{vmid}/config', 'PUT', { serial0: 'socket' })).toBeUndefined()
    expect(v('/nodes/{node}/qemu', 'POST', { usb0: 'host=1234:5678' })?.message).toBe(
      "only root can set 'usb0' config for real devices",
    )
    expect(v('/nodes/{node}/qemu', 'POST', { usb0: 'spice' })).toBeUndefined()
    expect(v('/nodes/{node}/qemu', 'POST', { hostpci0: '0000:01:00.0' })?.message).toBe(
      "only root can set 'hostpci0' config for non-mapped devices",
    )
    expect(v('/nodes/{node}/qemu', 'POST', { hostpci0: 'mapping=gpu' })).toBeUndefined()
  })

  it('lxc: feature flags other than nesting, hookscript, bind mounts and devices are 403', () => {
    expect(v('/nodes/{node}/lxc', 'POST', { features: 'nesting=1' })).toBeUndefined()
    expect(v('/nodes/{node}/lxc', 'POST', { features: 'nesting=1,keyctl=1' })).toEqual({
      status: 403,
      message: 'Permission check failed (changing feature flags (except nesting) is only allowed for root@pam)',
      errors: undefined,
    })
    expect(v('/nodes/{node}/lxc', 'POST', { features: 'nesting=1', unprivileged: false })?.message).toBe(
      'Permission check failed (changing feature flags for privileged container is only allowed for root@pam)',
    )
    const old = { unprivileged: '1', features: 'keyctl=1,nesting=0' }
    expect(
      v('/nodes/{node}/lxc/{vmid}/config', 'PUT', { vmid: 101, features: 'keyctl=1,nesting=1' }, token, old),
    ).toBeUndefined()
    expect(v('/nodes/{node}/lxc/{vmid}/config', 'PUT', { vmid: 101, features: 'nesting=1' }, token, old)?.status).toBe(
      403,
    )
    expect(v('/nodes/{node}/lxc/{vmid}/config', 'PUT', { vmid: 101, hookscript: 'local:snippets/x' })?.message).toBe(
      'Permission check failed (changing the hookscript is only allowed for root@pam)',
    )
    expect(v('/nodes/{node}/lxc/{vmid}/config', 'PUT', { vmid: 101, mp0: '/srv/data,mp=/data' })?.message).toBe(
      'Permission check failed (mount point type bind is only allowed for root@pam)',
    )
    expect(v('/nodes/{node}/lxc', 'POST', { dev0: '/dev/ttyUSB0' })?.message).toBe(
      'Permission check failed (configuring device passthrough is only allowed for root@pam)',
    )
  })
})
