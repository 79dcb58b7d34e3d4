/**
 * Fuzzing what PVE hands back: config strings into the wire codecs, and whole responses with wrong types
 * into the client and observe(). Every outcome is a value or a coded error (WireError / PveError /
 * planner error), never a TypeError or an unhandled rejection.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fc, test } from '@fast-check/vitest'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { createPveReadOnlyClient, isPveError, type PveReadOnlyClient } from '@proxops/pve-client'
import {
  WireError,
  decodeGuestConfig,
  decodeSshKeys,
  parsePropertyString,
  parseResize,
  parseSize,
  parseTags,
  parseUpid,
} from '@proxops/pve-client/wire'
import { observe } from '@proxops/planner'
import { runs } from './soak.js'

function valueOrWireError(fn: () => unknown): void {
  try {
    fn()
  } catch (e) {
    expect(e, `uncoded: ${String(e)}`).toBeInstanceOf(WireError)
    expect((e as WireError).code).toMatch(/^WIRE_/)
  }
}

const pveish = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.stringMatching(/^(?:[a-z0-9-]{0,8}=?[\w.:/;%+-]{0,20},?){0,8}$/),
  fc.constantFrom(
    'local-lvm:vm-100-disk-0,size=32G',
    'virtio=BC:24:11:00:00:01,bridge=vmbr0',
    'order=scsi0;ide2;net0',
    'a=b=c',
    ',,,',
    '=x',
    'size=-1G',
    'size=99999999999999999999T',
  ),
)

describe('wire codecs on arbitrary PVE strings', () => {
  test.prop([pveish], { numRuns: runs(3000) })('each parser answers a value or a WireError', (s) => {
    valueOrWireError(() => parsePropertyString(s))
    valueOrWireError(() => parsePropertyString(s, { defaultKey: 'file' }))
    valueOrWireError(() => parseSize(s))
    valueOrWireError(() => parseResize(s))
    valueOrWireError(() => parseTags(s))
    valueOrWireError(() => decodeSshKeys(s))
    valueOrWireError(() => parseUpid(s))
  })

  test.prop([fc.jsonValue({ maxDepth: 3 })], { numRuns: runs(2000) })('guest config decoding takes any JSON', (v) => {
    valueOrWireError(() => decodeGuestConfig(v))
  })
})

/** A fake PVE whose every answer is the next generated body (right envelope, wrong types inside). */
let server: Server
let client: PveReadOnlyClient
let nextBody: unknown = null
beforeAll(async () => {
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ data: nextBody }))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  client = createPveReadOnlyClient({
    baseUrl: `http://127.0.0.1:${port}`,
    auth: { type: 'token', tokenId: 'root@pam!fuzz', secret: 'canary-token-5d1c' },
    retry: { retries: 0 },
  })
})
afterAll(async () => {
  await client.close()
  await new Promise<void>((r) => server.close(() => r()))
})

const anyBody = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(
    fc.dictionary(
      fc.constantFrom(
        'vmid',
        'node',
        'type',
        'status',
        'name',
        'tags',
        'template',
        'storage',
        'content',
        'volid',
        'key',
        'value',
        'digest',
        'id',
      ),
      fc.jsonValue({ maxDepth: 1 }),
    ),
    { maxLength: 5 },
  ),
)

async function valueOrPveError(p: Promise<unknown>): Promise<void> {
  try {
    await p
  } catch (e) {
    expect(
      isPveError(e) || e instanceof WireError || (e as { code?: unknown }).code !== undefined,
      `uncoded: ${String(e)}`,
    ).toBe(true)
    expect(String((e as Error).message)).not.toContain('canary-token-5d1c')
  }
}

describe('client and observe on responses with wrong types', () => {
  test.prop([anyBody], { numRuns: runs(100) })('every read answers typed data or a coded error', async (body) => {
    nextBody = body
    await valueOrPveError(client.version())
    await valueOrPveError(client.clusterResources('vm'))
    await valueOrPveError(client.guestConfig('pve1', 'qemu', 100))
    await valueOrPveError(client.guestPending('pve1', 'qemu', 100))
    await valueOrPveError(client.guestStatus('pve1', 'lxc', 101))
    await valueOrPveError(client.storages('pve1'))
    await valueOrPveError(client.storageContent('pve1', 'local'))
    await valueOrPveError(observe('fuzz', client, { nodes: ['pve1'] }))
  })
})
