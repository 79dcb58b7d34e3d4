import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { classifyHttpFailure, classifyMessage, classifyNetworkFailure } from './classify.js'
import { PveError, PveLockedError, PveParamError } from './errors.js'

const fail = (status: number, message: string, errors?: Record<string, string>, withMessage = true) =>
  classifyHttpFailure({
    status,
    statusText: message.split('\n')[0] ?? '',
    body:
      status === 401
        ? null
        : { data: null, ...(withMessage ? { message: `${message}\n` } : {}), ...(errors ? { errors } : {}) },
    method: 'GET',
    path: '/nodes/{node}/qemu/{vmid}/config',
  })

describe('error classification', () => {
  it.each([
    [500, "Configuration file 'nodes/pve/qemu-server/999.conf' does not exist", 'PVE_NOT_FOUND'],
    [500, 'no such VM 999', 'PVE_NOT_FOUND'],
    [500, "unable to create VM 100 - VM 100 already exists on node 'pve'", 'PVE_ALREADY_EXISTS'],
    [500, 'VM is locked (clone)', 'PVE_LOCKED'],
    [500, 'CT is locked (backup)', 'PVE_LOCKED'],
    [500, "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout", 'PVE_LOCK_TIMEOUT'],
    // pve-cluster cfs_lock_storage / cfs_lock_domain
    [500, "cfs-lock 'storage-ceph' error: got lock request timeout", 'PVE_LOCK_TIMEOUT'],
    [500, 'checksum mismatch (file change by other user?)', 'PVE_DIGEST_MISMATCH'],
    [500, 'detected modified configuration - file changed by other user? Try again.', 'PVE_DIGEST_MISMATCH'],
    [500, 'VM 100 is running - destroy failed', 'PVE_FAILED'],
    [500, "only root can set 'args' config", 'PVE_PERMISSION'],
    [500, '', 'PVE_TRANSIENT'],
    [500, 'got no worker upid - start worker failed', 'PVE_TRANSIENT'],
    [401, 'No ticket', 'PVE_AUTH'],
    [403, 'Permission check failed (/vms/100, VM.Audit)', 'PVE_PERMISSION'],
    [501, "Method 'GET /foo' not implemented", 'PVE_NOT_IMPLEMENTED'],
    [502, 'Bad Gateway', 'PVE_TRANSIENT'],
    [503, 'Service Unavailable', 'PVE_TRANSIENT'],
    [595, 'Connection refused', 'PVE_TRANSIENT'],
    [596, 'Connection timed out', 'PVE_TRANSIENT'],
    [597, 'Broken pipe', 'PVE_TRANSIENT'],
    [506, 'unsupported content type', 'PVE_FAILED'],
  ])('%i %s -> %s', (status, message, code) => {
    const err = fail(status, message)
    expect(err).toBeInstanceOf(PveError)
    expect(err.code).toBe(code)
    expect(err.status).toBe(status)
    expect(err.message).toContain('GET /nodes/{node}/qemu/{vmid}/config')
  })

  it('400 carries the per-parameter map', () => {
    const err = fail(400, 'Parameter verification failed.', { onboot: "type check ('boolean') failed - got 'true'" })
    expect(err).toBeInstanceOf(PveParamError)
    expect(err.code).toBe('PVE_PARAM')
    expect((err as PveParamError).params).toEqual({ onboot: "type check ('boolean') failed - got 'true'" })
    expect(err.message).toContain('onboot')
  })

  it('400 meanings inside the errors map win (nextid, no such task)', () => {
    expect(fail(400, 'Parameter verification failed.', { vmid: 'VM 218 already exists' }).code).toBe(
      'PVE_ALREADY_EXISTS',
    )
    expect(fail(400, 'Parameter verification failed.', { upid: 'no such task' }).code).toBe('PVE_NOT_FOUND')
  })

  it('reads the reason phrase when the body has no message (PVE <= 8.3)', () => {
    const err = fail(500, 'VM is locked (migrate)', undefined, false)
    expect(err.code).toBe('PVE_LOCKED')
    expect((err as PveLockedError).lock).toBe('migrate')
  })

  it('classifies network failures: TLS permanent, fingerprint named, the rest transient', () => {
    const wrap = (code: string, message = 'x') =>
      new TypeError('fetch failed', { cause: Object.assign(new Error(message), { code }) })
    expect(classifyNetworkFailure(wrap('ECONNREFUSED'), 'GET', '/version').code).toBe('PVE_TRANSIENT')
    expect(classifyNetworkFailure(wrap('DEPTH_ZERO_SELF_SIGNED_CERT'), 'GET', '/version').code).toBe('PVE_TLS')
    expect(classifyNetworkFailure(wrap('ERR_TLS_CERT_ALTNAME_INVALID'), 'GET', '/version').code).toBe('PVE_TLS')
    const pin = classifyNetworkFailure(
      wrap('ERR_PVE_FINGERPRINT', 'PVE certificate fingerprint mismatch: expected A, got B'),
      'GET',
      '/version',
    )
    expect(pin.code).toBe('PVE_TLS_FINGERPRINT')
    expect(pin.message).toContain('fingerprint mismatch')
  })

  it('classifies task exit statuses by meaning', () => {
    expect(classifyMessage("can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout")).toBe(
      'PVE_LOCK_TIMEOUT',
    )
    expect(classifyMessage("unable to create VM 200 - cfs-lock 'storage-nas' error: got lock request timeout")).toBe(
      'PVE_LOCK_TIMEOUT',
    )
    expect(classifyMessage("clone failed: cfs-lock 'storage-nas' error: got lock request timeout")).toBe(
      'PVE_LOCK_TIMEOUT',
    )
    expect(classifyMessage('VM 100 already running')).toBeUndefined()
  })

  test.prop([fc.integer({ min: 400, max: 599 }), fc.string(), fc.anything()], { numRuns: 300 })(
    'any failure classifies to a PveError with a stable code and never throws',
    (status, statusText, body) => {
      const err = classifyHttpFailure({ status, statusText, body, method: 'POST', path: '/x' })
      expect(err).toBeInstanceOf(PveError)
      expect(err.code).toMatch(/^PVE_[A-Z_]+$/)
    },
  )
})
