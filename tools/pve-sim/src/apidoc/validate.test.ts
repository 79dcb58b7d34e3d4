import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { SchemaProp } from './load.js'
import { checkProp, parsePropertyString, validateParams, type MethodSchema } from './validate.js'

// Small hand-written schemas in apidoc.json's shape; the texts are pve-common JSONSchema.pm's
// (`check_prop` and its "Parameter verification failed." list).
const schema: MethodSchema = {
  additionalProperties: 0,
  properties: {
    node: { type: 'string', format: 'pve-node' },
    vmid: { type: 'integer', format: 'pve-vmid', minimum: 100, maximum: 999999999 },
    onboot: { type: 'boolean', optional: 1 },
    ostype: { type: 'string', enum: ['other', 'l26'], optional: 1 },
    cores: { type: 'integer', minimum: '1', optional: '1' },
    cpulimit: { type: 'number', minimum: 0, maximum: 128, optional: 1 },
    digest: { type: 'string', maxLength: 40, optional: 1 },
    password: { type: 'string', minLength: 5, optional: 1 },
    trunks: { type: 'string', pattern: '(?^:\\d+(?:;\\d+)*)', optional: 1 },
    delete: { type: 'string', format: 'pve-configid-list', optional: 1 },
    tags: { type: 'string', format: 'pve-tag-list', optional: 1 },
    sshkeys: { type: 'string', format: 'urlencoded', optional: 1 },
    checksum: { type: 'string', optional: 1, requires: 'checksum-algorithm' },
    'checksum-algorithm': { type: 'string', optional: 1, requires: 'checksum', enum: ['md5', 'sha256'] },
    cdrom: { alias: 'ide2', optional: 1 },
    ide2: { type: 'string', optional: 1 },
    'net[n]': {
      type: 'string',
      optional: 1,
      description: 'Specify network devices.',
      format: {
        model: { type: 'string', default_key: 1, enum: ['virtio', 'e1000'] },
        macaddr: { type: 'string', format: 'mac-addr', optional: 1 },
        virtio: { alias: 'macaddr', keyAlias: 'model' },
        firewall: { type: 'boolean', optional: 1 },
        tag: { type: 'integer', minimum: 1, maximum: 4094, optional: 1 },
      },
    },
    'scsi[n]': { type: 'string', optional: 1, description: 'Use volume as SCSI hard disk or CD-ROM (n is 0 to 30).' },
    ipconfig0: { type: 'string', format: 'pve-qm-ipconfig', optional: 1 },
  },
}

const base = { node: 'pve1', vmid: '100' }
function errorsOf(params: Record<string, unknown>): Record<string, string> {
  const r = validateParams(schema, { ...base, ...params })
  return r.ok ? {} : r.errors
}

describe('check_prop texts', () => {
  it('rejects onboot=true from a form: booleans are exactly 1 or 0', () => {
    expect(errorsOf({ onboot: 'true' })).toEqual({ onboot: "type check ('boolean') failed - got 'true'" })
    expect(errorsOf({ onboot: '1' })).toEqual({})
    expect(errorsOf({ onboot: '0' })).toEqual({})
  })

  it('accepts JSON true/false for booleans but not for other types (JSON::PP::Boolean)', () => {
    expect(errorsOf({ onboot: true })).toEqual({})
    expect(errorsOf({ ostype: true })).toEqual({ ostype: "type check ('string') failed - got JSON::PP::Boolean" })
  })

  it('names the enumeration', () => {
    expect(errorsOf({ ostype: 'linux' })).toEqual({
      ostype: "value 'linux' does not have a value in the enumeration 'other, l26'",
    })
  })

  it('reports unknown parameters', () => {
    expect(errorsOf({ pool: 'x' })).toEqual({
      pool: 'property is not defined in schema and the schema does not allow additional properties',
    })
  })

  it('reports missing required parameters', () => {
    const r = validateParams(schema, { node: 'pve1' })
    expect(r.ok ? {} : r.errors).toEqual({ vmid: 'property is missing and it is not optional' })
  })

  it('checks integers, numbers, ranges (also when the schema writes "minimum":"1")', () => {
    expect(errorsOf({ cores: 'x' })).toEqual({ cores: "type check ('integer') failed - got 'x'" })
    expect(errorsOf({ cores: '0' })).toEqual({ cores: 'value must have a minimum value of 1' })
    expect(errorsOf({ cpulimit: '200' })).toEqual({ cpulimit: 'value must have a maximum value of 128' })
    expect(errorsOf({ cpulimit: '.5' })).toEqual({})
    expect(errorsOf({ cpulimit: '1e1' })).toEqual({})
    expect(errorsOf({ vmid: '99' })).toEqual({ vmid: 'invalid format - value does not look like a valid VM ID\n' })
  })

  it('checks lengths and patterns', () => {
    expect(errorsOf({ digest: 'a'.repeat(41) })).toEqual({ digest: 'value may only be 40 characters long' })
    expect(errorsOf({ password: 'abc' })).toEqual({ password: 'value must be at least 5 characters long' })
    expect(errorsOf({ trunks: '10;20' })).toEqual({})
    expect(errorsOf({ trunks: '10,20' })).toEqual({ trunks: 'value does not match the regex pattern' })
  })

  it('reports `requires` on the missing property', () => {
    expect(errorsOf({ checksum: 'abc' })).toEqual({ 'checksum-algorithm': "missing property required by 'checksum'" })
    expect(errorsOf({ checksum: 'abc', 'checksum-algorithm': 'sha256' })).toEqual({})
  })

  it('rejects bad tag characters and sshkeys that are not urlencoded', () => {
    expect(errorsOf({ tags: 'web;prod!' })).toEqual({ tags: 'invalid format - invalid characters in tag\n' })
    expect(errorsOf({ tags: 'Web, prod web' })).toEqual({})
    expect(errorsOf({ sshkeys: 'ssh-ed25519 AAAA ops@laptop' })).toEqual({
      sshkeys: 'invalid format - invalid urlencoded string: ssh-ed25519 AAAA ops@laptop\n',
    })
    expect(errorsOf({ sshkeys: encodeURIComponent('ssh-ed25519 AAAA ops@laptop') })).toEqual({})
  })

  it('checks every item of a -list format', () => {
    expect(errorsOf({ delete: 'tags,9x' })).toEqual({ delete: "invalid format - invalid configuration ID '9x'\n" })
  })
})

describe('property strings', () => {
  it('reports value errors inside a property string as a PVE::Exception with the sub-path', () => {
    expect(errorsOf({ net0: 'virtio,tag=5000' })).toEqual({
      net0: 'invalid format - format error\nnet0.tag: value must have a maximum value of 4094\n',
    })
    expect(errorsOf({ net0: 'bridge=vmbr0' }).net0).toBe(
      'invalid format - invalid key in comma-separated list property: bridge\n',
    )
    expect(errorsOf({ net0: 'firewall=1' })).toEqual({
      net0: 'invalid format - format error\nnet0.model: property is missing and it is not optional\n',
    })
  })

  it('accepts the keyAlias shorthand and boolean words inside property strings', () => {
    expect(errorsOf({ net0: 'virtio=BC:24:11:00:00:01,firewall=on' })).toEqual({})
    expect(
      parsePropertyString(
        schema.properties?.['net[n]']?.format as Record<string, SchemaProp>,
        'virtio=BC:24:11:00:00:01,firewall=yes',
        'net0',
      ),
    ).toEqual({
      model: 'virtio',
      macaddr: 'BC:24:11:00:00:01',
      firewall: '1',
    })
  })

  it('rejects duplicate keys and a second bare value', () => {
    expect(errorsOf({ net0: 'virtio,e1000' }).net0).toBe(
      'invalid format - duplicate key in comma-separated list property: model\n',
    )
    expect(errorsOf({ net0: 'virtio,tag=1,tag=2' }).net0).toBe(
      'invalid format - duplicate key in comma-separated list property: tag\n',
    )
  })

  it('checks the named hash format pve-qm-ipconfig, incl. gw requiring ip', () => {
    expect(errorsOf({ ipconfig0: 'ip=10.0.0.10/24,gw=10.0.0.1' })).toEqual({})
    expect(errorsOf({ ipconfig0: 'ip=dhcp' })).toEqual({})
    expect(errorsOf({ ipconfig0: 'gw=10.0.0.1' })).toEqual({
      ipconfig0: "invalid format - format error\nipconfig0.ip: missing property required by 'ipconfig0.gw'\n",
    })
    expect(errorsOf({ ipconfig0: 'ip=10.0.0.10' })).toEqual({
      ipconfig0:
        'invalid format - format error\nipconfig0.ip: invalid format - value does not look like a valid ipv4 network configuration\n\n',
    })
  })
})

describe('indexed keys, aliases, lists, coercion', () => {
  it('accepts name[n] keys within the range from the description, else unknown', () => {
    expect(errorsOf({ scsi30: 'local-lvm:1' })).toEqual({})
    expect(errorsOf({ scsi31: 'local-lvm:1' })).toEqual({
      scsi31: 'property is not defined in schema and the schema does not allow additional properties',
    })
    expect(errorsOf({ net32: 'virtio' })).toEqual({
      net32: 'property is not defined in schema and the schema does not allow additional properties',
    })
    expect(errorsOf({ scsi01: 'x' })).toHaveProperty('scsi01')
  })

  it('maps an alias to its target (cdrom -> ide2) and refuses both at once', () => {
    const r = validateParams(schema, { ...base, cdrom: 'local:iso/x.iso,media=cdrom' })
    expect(r.ok && r.params).toMatchObject({ ide2: 'local:iso/x.iso,media=cdrom' })
    expect(errorsOf({ cdrom: 'a', ide2: 'b' })).toEqual({
      cdrom: "cannot set both 'cdrom' and its alias target 'ide2'",
    })
  })

  it('joins a repeated key of a -list format with commas; rejects arrays elsewhere', () => {
    const r = validateParams(schema, { ...base, delete: ['tags', 'onboot'] })
    expect(r.ok && r.params.delete).toBe('tags,onboot')
    expect(errorsOf({ ostype: ['l26', 'other'] })).toEqual({ ostype: "type check ('string') failed - got ARRAY" })
  })

  it('treats a form key without value (undef) as absent', () => {
    expect(errorsOf({ onboot: null })).toEqual({})
    const r = validateParams(schema, { node: 'pve1', vmid: null })
    expect(r.ok ? {} : r.errors).toEqual({ vmid: 'property is missing and it is not optional' })
  })

  it('joins two messages for one path with a literal backslash-n like Perl', () => {
    const errors: Record<string, string> = {}
    checkProp(undefined, { type: 'string' }, 'x', errors)
    checkProp('y', { type: 'integer' }, 'x', errors)
    expect(errors.x).toBe("property is missing and it is not optional\\ntype check ('integer') failed - got 'y'")
  })

  it('coerces validated values to the schema type for handlers', () => {
    const r = validateParams(schema, { ...base, onboot: '1', cores: '+2', cpulimit: '1.5', ostype: 'l26' })
    expect(r.ok && r.params).toEqual({ node: 'pve1', vmid: 100, onboot: true, cores: 2, cpulimit: 1.5, ostype: 'l26' })
  })

  it('integer type check = Perl ^[+-]?\\d+$ (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 8 }), (s) => {
        const errors: Record<string, string> = {}
        checkProp(s, { type: 'integer' }, 'n', errors)
        expect(errors.n === undefined).toBe(/^[+-]?\d+$/.test(s))
      }),
      { numRuns: 300 },
    )
  })

  it('boolean form values other than 1/0 always fail with the value quoted (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 6 }).filter((s) => s !== '1' && s !== '0'),
        (s) => {
          const errors: Record<string, string> = {}
          checkProp(s, { type: 'boolean' }, 'b', errors)
          expect(errors.b).toBe(`type check ('boolean') failed - got '${s}'`)
        },
      ),
      { numRuns: 200 },
    )
  })
})
