/**
 * Against the real 9.1 schema: the values ProxOps sends must pass (no false rejections), and typical mistakes
 * must fail with PVE's texts.
 */
import { describe, expect, it } from 'vitest'
import { loadApidoc, type ApiMethodInfo } from './load.js'
import { RouteIndex } from './route-index.js'
import { validateParams } from './validate.js'

const apidoc = loadApidoc('9.1')
const index = apidoc.ok ? RouteIndex.fromTree(apidoc.tree) : undefined
function check(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  params: Record<string, unknown>,
): Record<string, string> {
  const m = index?.match(method, path)
  const info = m?.info as ApiMethodInfo
  const r = validateParams(info.parameters ?? {}, { ...m?.pathParams, ...params })
  return r.ok ? {} : r.errors
}

describe.skipIf(!apidoc.ok)('apidoc 9.1 parameter checks', () => {
  it('accepts a full qemu create as ProxOps sends it', () => {
    expect(
      check('POST', '/nodes/pve1/qemu', {
        vmid: '100',
        name: 'web-1',
        memory: '2048',
        balloon: '1024',
        cores: '2',
        sockets: '1',
        cpu: 'x86-64-v2-AES,flags=+aes;-pcid',
        ostype: 'l26',
        scsihw: 'virtio-scsi-single',
        agent: 'enabled=1,fstrim_cloned_disks=1',
        bios: 'ovmf',
        machine: 'q35',
        efidisk0: 'local-lvm:1,efitype=4m,pre-enrolled-keys=1',
        tpmstate0: 'local-lvm:1,version=v2.0',
        scsi0: 'local-lvm:0,import-from=local:import/debian-12.qcow2,discard=on,iothread=1,ssd=1,cache=none',
        scsi1: 'local-lvm:32,format=raw,backup=0',
        virtio0: 'local-zfs:10',
        sata0: 'local:iso/debian.iso,media=cdrom',
        ide2: 'local-lvm:cloudinit',
        net0: 'virtio,bridge=vmbr0,firewall=1,tag=10',
        net1: 'virtio=BC:24:11:AA:BB:CC,bridge=vmbr1,mtu=1500,queues=4',
        ipconfig0: 'ip=10.0.0.10/24,gw=10.0.0.1',
        ipconfig1: 'ip6=auto',
        nameserver: '10.0.0.1 1.1.1.1',
        searchdomain: 'example.com',
        ciuser: 'ops',
        cipassword: 'secret',
        citype: 'nocloud',
        sshkeys: encodeURIComponent('ssh-ed25519 AAAA ops@laptop\n'),
        cicustom: 'user=local:snippets/user.yaml',
        tags: 'web;prod',
        onboot: '1',
        startup: 'order=2,up=30',
        boot: 'order=scsi0;ide2;net0',
        description: 'managed by proxops\nline 2',
        pool: 'prod',
        storage: 'local-lvm',
        start: '0',
        protection: '0',
        hotplug: 'network,disk,usb',
        numa: '0',
        vga: 'std',
        serial0: 'socket',
        smbios1: 'uuid=6d2f0c1a-5b7e-4f3a-9c1d-2e4b6a8c0f13',
        'ha-managed': '0',
      }),
    ).toEqual({})
  })

  it('accepts qemu config updates with delete/revert/digest, and resize/clone/status calls', () => {
    expect(
      check('PUT', '/nodes/pve1/qemu/100/config', {
        delete: 'net1,scsi1',
        digest: 'a'.repeat(40),
        force: '1',
        memory: '4096',
      }),
    ).toEqual({})
    expect(check('POST', '/nodes/pve1/qemu/100/config', { background_delay: '5', tags: 'a' })).toEqual({})
    expect(check('PUT', '/nodes/pve1/qemu/100/resize', { disk: 'scsi0', size: '+10G' })).toEqual({})
    expect(
      check('POST', '/nodes/pve1/qemu/9000/clone', {
        newid: '101',
        name: 'web-2',
        full: '1',
        storage: 'local-lvm',
        target: 'pve2',
        pool: 'prod',
      }),
    ).toEqual({})
    expect(check('POST', '/nodes/pve1/qemu/100/status/shutdown', { timeout: '60', forceStop: '1' })).toEqual({})
    expect(check('DELETE', '/nodes/pve1/qemu/100', { purge: '1', 'destroy-unreferenced-disks': '1' })).toEqual({})
    expect(check('GET', '/nodes/pve1/qemu/100/config', { current: '1' })).toEqual({})
  })

  it('accepts a full lxc create and config update', () => {
    expect(
      check('POST', '/nodes/pve1/lxc', {
        vmid: '101',
        ostemplate: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst',
        hostname: 'ct-1',
        cores: '2',
        memory: '1024',
        swap: '512',
        rootfs: 'local-lvm:8',
        mp0: 'local-lvm:4,mp=/data,backup=1',
        net0: 'name=eth0,bridge=vmbr0,ip=dhcp,ip6=auto,firewall=1,hwaddr=BC:24:11:2E:C5:7E',
        net1: 'name=eth1,bridge=vmbr1,ip=10.0.0.20/24,gw=10.0.0.1,tag=20',
        features: 'nesting=1',
        unprivileged: '1',
        password: 'secret12',
        'ssh-public-keys': 'ssh-ed25519 AAAA ops@laptop',
        nameserver: '10.0.0.1',
        searchdomain: 'example.com',
        onboot: '1',
        start: '1',
        tags: 'ct;prod',
        pool: 'prod',
        storage: 'local-lvm',
        timezone: 'Europe/Berlin',
        description: 'x',
        ostype: 'debian',
        arch: 'amd64',
      }),
    ).toEqual({})
    expect(
      check('PUT', '/nodes/pve1/lxc/101/config', {
        delete: 'mp0',
        memory: '2048',
        digest: 'b'.repeat(40),
        features: 'nesting=1,keyctl=1',
      }),
    ).toEqual({})
    expect(check('PUT', '/nodes/pve1/lxc/101/resize', { disk: 'rootfs', size: '16G' })).toEqual({})
  })

  it('accepts storage calls: content listing, download-url with checksum', () => {
    expect(check('GET', '/nodes/pve1/storage/local/content', { content: 'iso' })).toEqual({})
    expect(
      check('POST', '/nodes/pve1/storage/local/download-url', {
        url: 'https://cloud.debian.org/images/debian-12-genericcloud-amd64.qcow2',
        content: 'import',
        filename: 'debian-12.qcow2',
        checksum: 'ab'.repeat(32),
        'checksum-algorithm': 'sha256',
        'verify-certificates': '1',
      }),
    ).toEqual({})
    expect(check('GET', `/cluster/resources`, { type: 'vm' })).toEqual({})
    expect(check('GET', `/cluster/nextid`, { vmid: '150' })).toEqual({})
  })

  it('rejects typical mistakes with PVE texts', () => {
    expect(check('POST', '/nodes/pve1/qemu', { vmid: '100', name: 'web_1' })).toEqual({
      name: 'invalid format - value does not look like a valid DNS name\n',
    })
    expect(check('POST', '/nodes/pve1/qemu', { vmid: '100', net0: 'virtio=01:00:00:00:00:01' })).toEqual({
      net0: 'invalid format - format error\nnet0.macaddr: invalid format - value does not look like a valid unicast MAC address\n\n',
    })
    expect(check('POST', '/nodes/pve1/qemu', { vmid: '100', scsi0: 'local-lvm:32,size=32GB' })).toEqual({
      scsi0:
        'invalid format - format error\nscsi0.size: invalid format - value does not look like a valid disk size: 32GB\n\n',
    })
    expect(check('PUT', '/nodes/pve1/qemu/100/config', { delete: 'net0;9x' })).toEqual({
      delete: "invalid format - invalid configuration ID '9x'\n",
    })
    expect(check('PUT', '/nodes/pve1/qemu/100/resize', { disk: 'scsi0', size: '10GB' })).toEqual({
      size: 'value does not match the regex pattern',
    })
    expect(
      check('POST', '/nodes/pve1/lxc', { vmid: '101', ostemplate: 'local:vztmpl/x.tar.zst', net0: 'bridge=vmbr0' }),
    ).toEqual({
      net0: 'invalid format - format error\nnet0.name: property is missing and it is not optional\n',
    })
    expect(
      check('POST', '/nodes/pve1/storage/local/download-url', {
        url: 'ftp://x/y.iso',
        content: 'iso',
        filename: 'y.iso',
      }),
    ).toEqual({
      url: 'value does not match the regex pattern',
    })
  })
})
