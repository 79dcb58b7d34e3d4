import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { mapId, parseIdmap, PerlDie, parseSize, resolveFormat, splitList, uncheckedFormat } from './formats.js'

/** the die text of a named format, or undefined when the value passes */
function check(format: string, value: string): string | undefined {
  const f = resolveFormat(format)
  if (f.kind !== 'code') throw new Error(`${format} is not a code format`)
  try {
    f.verify(value)
    return undefined
  } catch (err) {
    if (err instanceof PerlDie) return err.message
    throw err
  }
}

describe('named formats', () => {
  it('pve-tag-list: split on ; , and whitespace, each tag ^[a-z0-9_][a-z0-9_\\-+.]*$ (case-insensitive)', () => {
    expect(check('pve-tag-list', 'Web;prod web,x')).toBeUndefined()
    expect(check('pve-tag-list', '')).toBeUndefined()
    expect(check('pve-tag-list', 'ok;-bad')).toBe('invalid characters in tag\n')
    expect(check('pve-tag-list', 'a/b')).toBe('invalid characters in tag\n')
  })

  it('urlencoded: exactly what encodeURIComponent produces passes (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (s) => {
        expect(check('urlencoded', encodeURIComponent(s))).toBeUndefined()
      }),
      { numRuns: 200 },
    )
    expect(check('urlencoded', 'ssh-rsa AAAA+b/c=')).toBe('invalid urlencoded string: ssh-rsa AAAA+b/c=\n')
  })

  it('mac-addr: unicast only', () => {
    expect(check('mac-addr', 'BC:24:11:7D:3A:9E')).toBeUndefined()
    expect(check('mac-addr', '01:24:11:7D:3A:9E')).toBe('value does not look like a valid unicast MAC address\n')
  })

  it('disk-size: binary units with optional iB, plain bytes', () => {
    expect(parseSize('32G')).toBe(32 * 1024 ** 3)
    expect(parseSize('1.5KiB')).toBe(1536)
    expect(parseSize('528K')).toBe(528 * 1024)
    expect(parseSize('12')).toBe(12)
    expect(check('disk-size', '10GB')).toBe('value does not look like a valid disk size: 10GB\n')
  })

  it('dns-name: no underscores, labels not starting/ending with a dash', () => {
    expect(check('dns-name', 'web-1.example.com')).toBeUndefined()
    expect(check('dns-name', 'web_1')).toBe('value does not look like a valid DNS name\n')
    expect(check('dns-name', '-web')).toBe('value does not look like a valid DNS name\n')
  })

  it('volume ids: storage:volname, or paths/none/cdrom for drives', () => {
    expect(check('pve-volume-id', 'local:iso/debian.iso')).toBeUndefined()
    expect(check('pve-volume-id', 'local-lvm:32')).toBeUndefined()
    expect(check('pve-volume-id', 'nocolon')).toBe("unable to parse volume ID 'nocolon'\n")
    expect(check('pve-volume-id-or-qm-path', 'none')).toBeUndefined()
    expect(check('pve-volume-id-or-qm-path', '/dev/sdb')).toBeUndefined()
    expect(check('pve-volume-id-or-absolute-path', 'x')).toBe("unable to parse volume ID 'x'\n")
  })

  it('pve-configid-list and ip configs', () => {
    expect(check('pve-configid-list', 'net0, scsi1;tags')).toBeUndefined()
    expect(check('pve-configid-list', 'net0,0net')).toBe("invalid configuration ID '0net'\n")
    expect(check('pve-ipv4-config', '10.0.0.5/24')).toBeUndefined()
    expect(check('pve-ipv4-config', '10.0.0.5/33')).toBe(
      'value does not look like a valid ipv4 network configuration\n',
    )
    expect(check('pve-ipv6-config', 'auto')).toBeUndefined()
    expect(check('pve-node', 'pve_1')).toBe('value does not look like a valid node name\n')
    expect(check('pve-storage-id', 'l')).toBe("storage ID 'l' contains illegal characters\n")
  })

  it('pve-ha-manager PVE::HA::Tools formats: resource ids, node[:prio] entries', () => {
    expect(check('pve-ha-resource-id-list', 'vm:100, ct:101')).toBeUndefined()
    expect(check('pve-ha-resource-id-list', 'vm:100,101')).toBe('value does not look like a valid ha resource id\n')
    expect(check('pve-ha-resource-or-vm-id', '101')).toBeUndefined()
    expect(check('pve-ha-resource-or-vm-id', 'VM:101')).toBe('value does not look like a valid ha resource id\n')
    expect(check('pve-ha-node-list', 'pve1:2,pve2')).toBeUndefined()
    expect(check('pve-ha-node-list', 'pve1:high')).toBe('value does not look like a valid ha node\n')
    expect(check('pve-ha-group-node-list', 'pve_1')).toBe('value does not look like a valid ha group node\n')
  })

  it('pve-qm-bootdev-list: drives except efidisk/tpmstate, net/usb/hostpci', () => {
    expect(check('pve-qm-bootdev-list', 'scsi0;ide2;net0')).toBeUndefined()
    expect(check('pve-qm-bootdev-list', 'efidisk0')).toBe("invalid boot device 'efidisk0'\n")
    expect(check('pve-qm-bootdev-list', 'scsi31')).toBe("invalid boot device 'scsi31'\n")
  })

  it('access-control formats (pve-access-control AccessControl.pm, Auth/Plugin.pm)', () => {
    expect(check('pve-poolid', 'prod/web')).toBeUndefined()
    expect(check('pve-poolid', 'a/b/c/d')).toBe("pool name 'a/b/c/d' nested too deeply (max levels = 3)\n")
    expect(check('pve-poolid', 'pr od')).toBe("pool name 'pr od' contains invalid characters\n")
    expect(check('pve-userid', 'ab')).toBe("user name 'ab' is too short\n")
    expect(check('pve-userid', 'root')).toBe("value 'root' does not look like a valid user name\n")
    expect(check('pve-userid', 'root@pam')).toBeUndefined()
    expect(check('pve-realm', '1pam')).toBe('value does not look like a valid realm\n')
  })

  it('split_list drops empty items and splits on \\0 when present', () => {
    expect(splitList(' a, b;;c  d ')).toEqual(['a', 'b', 'c', 'd'])
    expect(splitList('a b\0c')).toEqual(['a b', 'c'])
  })

  it('reports formats it does not check', () => {
    expect(uncheckedFormat('pve-fw-conntrack-helper')).toBe(true)
    expect(uncheckedFormat('pve-fw-addr-spec')).toBe(false)
    expect(uncheckedFormat('pve-tag-list')).toBe(false)
    expect(resolveFormat('pve-qm-ipconfig').kind).toBe('hash')
  })
})

describe('pve-common JSONSchema parse_idmap and map_id (storage-pair-list)', () => {
  it('entries, a default and the identity; map_id falls back to the default, then to the source', () => {
    const map = parseIdmap('local-lvm:local-zfs,nas', 'pve-storage-id')
    expect(map).toEqual({ entries: new Map([['local-lvm', 'local-zfs']]), default: 'nas' })
    expect([mapId(map, 'local-lvm'), mapId(map, 'other'), mapId(undefined, 'x')]).toEqual(['local-zfs', 'nas', 'x'])
    expect(parseIdmap('1', 'pve-storage-id')).toEqual({ entries: new Map(), identity: true })
    expect(parseIdmap('', 'pve-storage-id')).toBeUndefined()
  })

  it("dies with PVE's messages", () => {
    const dies = (text: string) => {
      try {
        parseIdmap(text, 'pve-storage-id')
      } catch (e) {
        return (e as Error).message
      }
      return undefined
    }
    expect(dies('aa:bb,aa:cc')).toBe("duplicate mapping for source 'aa'\n")
    expect(dies('aa,bb')).toBe('default target ID can only be provided once\n')
    expect(dies('1,aa')).toBe('identity mapping cannot be combined with other mappings\n')
    expect(dies('aa:b!')).toBe("entry 'aa:b!' contains invalid ID - storage ID 'b!' contains illegal characters\n\n")
  })
})
