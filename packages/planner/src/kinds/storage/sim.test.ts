/**
 * Storages against the simulator's /storage (pve-storage PVE::API2::Storage::Config create / update / delete)
 * with the real client: create, drift, a fixed option refused in diff (check_config), credentials sent once and
 * again only when rotated in SOPS (exactly one update), canaries absent from every plan and report, prune only of
 * a storage the ledger records, never of one that holds a volume.
 */
import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import type { PveClient } from '@proxops/pve-client'
import type { StorageManifest } from '@proxops/schema'
import { simPve, type SimPve } from '../../test-support/sim.js'
import { useSimPve } from '../../test-support/use-sim.js'
import { reconcile } from '../../reconcile/reconcile.js'
import { desired, policy, storage } from '../../fixtures.test.helpers.js'
import { storageLedger, type LedgerEntry } from '../../ledger.js'
import { serializePlan } from '../../serialize.js'

let env: SimPve
let pve: PveClient
useSimPve({ taskDurationMs: 10 }, 'file', (e) => {
  env = e
  pve = e.client
})

const CANARY = 'canary-storage-pw-5d1c'
const KEY = (fp: string) => JSON.stringify({ kdf: null, data: 'canary-key-data-77aa', fingerprint: fp })
const pol = policy({ nodes: [], pruneRatioLimit: 1 })
const entry: LedgerEntry = { storages: {} }
const ledger = storageLedger('k'.repeat(32), entry)
let secrets: Record<string, string> = {}

/** one apply cycle, then a dry run that must plan nothing; the storage actions of the apply */
async function converge(ms: StorageManifest[]) {
  const all = desired(...ms)
  const opts = { desired: all, reader: pve, policy: pol, ledger, secrets: (ref: string) => secrets[ref] }
  const { plan: p, report } = await reconcile({
    ...opts,
    writer: pve,
    execute: { confirmAttempts: 1, confirmDelayMs: 0 },
  })
  expect(report?.results.map((r) => [r.address, r.status])).toEqual(p.actions.map((a) => [a.address, 'ok']))
  const again = await reconcile(opts)
  expect(again.plan.actions).toEqual([])
  const text = `${serializePlan(p)}\n${JSON.stringify(report)}\n${serializePlan(again.plan)}`
  for (const v of Object.values(secrets)) expect(text).not.toContain(v)
  expect(text).not.toContain('canary-key-data')
  return p
}

const nas = (over: Record<string, unknown> = {}) =>
  storage('nas', { type: 'nfs', server: '10.0.0.5', export: '/export/pve', content: ['iso', 'images'], ...over })
const smb = () =>
  storage('smb', { type: 'cifs', server: '10.0.0.9', share: 'vms', username: 'svc', 'password-ref': 'secrets.smb-pw' })
const pbs = () =>
  storage('backup', {
    type: 'pbs',
    server: 'pbs.lan',
    datastore: 'store1',
    username: 'sync@pbs',
    'password-ref': 'secrets.pbs-pw',
    'encryption-key-ref': 'secrets.pbs-key',
    'prune-backups': { 'keep-daily': 7 },
  })

describe('Storage through reconcile()', () => {
  it('creates what is missing, puts drift back, and refuses a fixed option in diff', async () => {
    secrets = { 'secrets.smb-pw': CANARY, 'secrets.pbs-pw': `${CANARY}-pbs`, 'secrets.pbs-key': KEY('aa:bb') }
    const created = await converge([nas(), smb(), pbs()])
    expect(created.actions.map((a) => [a.address, a.type])).toEqual([
      ['Storage/backup', 'create'],
      ['Storage/nas', 'create'],
      ['Storage/smb', 'create'],
    ])
    expect(await pve.get('/storage/backup')).toMatchObject({
      'encryption-key': 'aa:bb',
      'prune-backups': 'keep-daily=7',
    })
    expect(Object.keys(entry.storages).sort()).toEqual(['backup', 'nas', 'smb'])

    // drift made by hand: content and a disable flag
    await pve.request('PUT', '/storage/nas', { params: { content: 'iso', disable: 1 } })
    const drift = await converge([nas({ disable: false }), smb(), pbs()])
    expect(drift.actions.map((a) => [a.address, a.type, a.diffs.map((d) => d.key)])).toEqual([
      ['Storage/nas', 'update', ['content', 'disable']],
    ])

    // a fixed option (the NFS server) cannot be sent on update: an anomaly in diff, nothing written
    const moved = await reconcile({
      desired: desired(nas({ server: '10.0.0.6' }), smb(), pbs()),
      reader: pve,
      policy: pol,
      ledger,
      secrets: (r) => secrets[r],
    })
    expect(moved.plan.actions).toEqual([])
    expect(moved.plan.anomalies.map((a) => [a.code, a.field])).toEqual([['create-only-option', 'spec.server']])
  })

  it('a credential rotated in SOPS is sent exactly once; the PBS key by the fingerprint PVE lists', async () => {
    secrets['secrets.smb-pw'] = `${CANARY}-rotated`
    const rotated = await converge([nas({ disable: false }), smb(), pbs()])
    expect(rotated.actions.map((a) => [a.address, a.diffs.map((d) => [d.key, d.before, d.after])])).toEqual([
      ['Storage/smb', [['password', '(sensitive)', '(sensitive)']]],
    ])
    expect(rotated.actions[0]?.reason).toContain('credential password: changed in SOPS')
    secrets['secrets.pbs-key'] = KEY('cc:dd')
    const key = await converge([nas({ disable: false }), smb(), pbs()])
    expect(key.actions.map((a) => [a.address, a.diffs.map((d) => d.key)])).toEqual([
      ['Storage/backup', ['encryption-key']],
    ])
    expect(await pve.get('/storage/backup')).toMatchObject({ 'encryption-key': 'cc:dd' })
  })

  it('prunes only a storage the ledger records, never one that holds a volume (naming it)', async () => {
    // a storage made by hand is never touched; nas holds a disk of a guest made by hand
    await pve.request('POST', '/storage', { params: { storage: 'byhand', type: 'dir', path: '/srv/x' } })
    await pve.waitTaskOk(await pve.createGuest('pve1', 'qemu', { vmid: 990, scsi0: 'nas:1' }))
    const blocked = await reconcile({
      desired: desired(pbs()),
      reader: pve,
      policy: pol,
      ledger,
      secrets: (r) => secrets[r],
    })
    expect(blocked.plan.actions.map((a) => [a.address, a.type])).toEqual([['Storage/smb', 'delete']])
    const skip = blocked.plan.skips.find((s) => s.address === 'Storage/nas')
    expect(skip?.code).toBe('prune-guard')
    expect(skip?.message).toMatch(/still holds 1 volume\(s\) \(nas:990\/vm-990-disk-0\.\w+\)/)
    expect(blocked.plan.skips.some((s) => s.address === 'Storage/byhand')).toBe(false)
  })

  it('reads cost one request for any number of storages: 100 declared storages and the datacenter options', async () => {
    const many = Array.from({ length: 100 }, (_, i) => storage(`bulk${i}`, { type: 'dir', path: `/srv/bulk${i}` }))
    await converge(many.concat(pbs()))
    const before = env.requests().length
    await reconcile({ desired: desired(...many, pbs()), reader: pve, policy: pol, ledger, secrets: (r) => secrets[r] })
    const reads = env.requests().slice(before)
    expect(reads.filter((r) => r.startsWith('GET /storage'))).toEqual(['GET /storage'])
    // no request per declared storage (content is listed only for owned storages git no longer declares)
    expect(reads.filter((r) => r.includes('bulk'))).toEqual([])
  })

  test.prop(
    [
      fc.uniqueArray(
        fc.record({
          id: fc.stringMatching(/^r[a-z0-9]{1,6}$/),
          type: fc.constantFrom('dir', 'nfs', 'zfspool', 'lvmthin'),
          content: fc.subarray(['images', 'rootdir', 'iso', 'backup']),
          nodes: fc.option(fc.subarray(['pve1', 'pve2', 'pve3'], { minLength: 1 }), { nil: undefined }),
          disable: fc.option(fc.boolean(), { nil: undefined }),
        }),
        { selector: (r) => r.id, maxLength: 5 },
      ),
    ],
    { numRuns: 8 },
  )('random storage estates converge in one apply, and the next plan is empty', async (rows) => {
    const required: Record<string, Record<string, string>> = {
      dir: { path: '/srv/r' },
      nfs: { server: '10.0.0.5', export: '/e' },
      zfspool: { pool: 'tank/r' },
      lvmthin: { vgname: 'pve', thinpool: 'data' },
    }
    const allowed: Record<string, string[]> = {
      dir: ['images', 'rootdir', 'iso', 'backup'],
      nfs: ['images', 'rootdir', 'iso', 'backup'],
      zfspool: ['images', 'rootdir'],
      lvmthin: ['images', 'rootdir'],
    }
    const ms = rows.map((r) => {
      const content = r.content.filter((c) => allowed[r.type]!.includes(c))
      return storage(r.id, {
        type: r.type,
        ...required[r.type],
        ...(content.length > 0 ? { content } : {}),
        ...(r.nodes ? { nodes: r.nodes } : {}),
        ...(r.disable !== undefined ? { disable: r.disable } : {}),
      })
    })
    // a fresh PVE and ledger per estate: nothing of an earlier case is left to prune
    const own = simPve({ taskDurationMs: 10 })
    try {
      const led = storageLedger('p'.repeat(32), { storages: {} })
      const opts = { desired: desired(...ms), reader: own.client, policy: pol, ledger: led }
      const { plan: p, report } = await reconcile({ ...opts, writer: own.client })
      expect(report?.results.map((r) => r.status)).toEqual(p.actions.map(() => 'ok'))
      expect(p.actions.length).toBe(ms.length)
      expect((await reconcile(opts)).plan.actions).toEqual([])
    } finally {
      await own.close()
    }
  })
})
