/**
 * Red team for the Storage kind (issue 39 item 5), the real CLI against a PVE that misbehaves (a proxy in front of
 * the simulator): a PVE that echoes a credential in its error text, a storage made by hand and one another cluster
 * entry's ledger owns, and a `GET /storage` whose items lack their id. Each case: no credential byte in any output
 * or in the data dir, and no write to a storage ProxOps cannot prove is its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { startSimulator, type Simulator } from '@proxops/pve-sim'
import { encryptSops } from '@proxops/sops'
import { commit, doc, makeRepo, resources, runCli, type Repo, simAdmin } from './cli-harness.js'
import { startHostilePve, type HostilePve } from './hostile-pve.js'

const KEY_FILE = fileURLToPath(new URL('../../../examples/repository/keys/test-only.agekey', import.meta.url))
const recipient = (): string => {
  const m = /public key: (age1[0-9a-z]+)/.exec(readFileSync(KEY_FILE, 'utf8'))
  if (!m?.[1]) throw new Error('test key without a public key comment')
  return m[1]
}
const CANARY = 'redteam-smbpw-CANARY-6b0e'

let sim: Simulator
let pve: HostilePve
let repo: Repo

const SMB = doc(
  'Storage',
  'smb',
  '  type: cifs\n  server: 10.0.0.9\n  share: vms\n  username: svc\n  password-ref: secrets.smb-pw\n',
)
const NAS = doc('Storage', 'nas', '  type: nfs\n  server: 10.0.0.5\n  export: /export/pve\n')

/** everything under the repository's HOME (the data dir, with the storage ledger) */
function homeText(): string {
  const out: string[] = []
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else out.push(readFileSync(p, 'utf8'))
    }
  }
  walk(repo.env.HOME as string)
  return out.join('\n')
}

beforeAll(async () => {
  sim = await startSimulator({ taskDurationMs: 20, authFailureDelayMs: 0, resourcesLagMs: 0, log: () => {} })
  pve = await startHostilePve(sim)
  repo = makeRepo(pve, { 'storage/c/smb.yaml': SMB, 'storage/c/nas.yaml': NAS })
  const [user, tokenId] = sim.token.id.split('!')
  const plain = `secrets:\n  pve-user: ${user}\n  pve-token-id: ${tokenId}\n  pve-token: ${sim.token.secret}\n  smb-pw: ${CANARY}\n`
  writeFileSync(
    join(repo.root, 'clusters/c/secrets.sops.yaml'),
    await encryptSops(plain, { recipients: [recipient()], file: 'secrets.sops.yaml' }),
  )
  const config = readFileSync(join(repo.root, 'clusters/c/config.yaml'), 'utf8')
  commit(
    repo,
    {
      'clusters/c/config.yaml': `${config}      secrets-file: secrets.sops.yaml\n      secrets:\n        pve:\n          user: pve-user\n          token-id: pve-token-id\n          token: pve-token\n`,
    },
    'sops',
  )
  delete repo.env.PROXOPS_PVE_TOKEN_VALUE
  repo.env.SOPS_AGE_KEY_FILE = KEY_FILE
}, 60_000)
afterAll(async () => {
  repo?.cleanup()
  await pve?.close()
  await sim?.close()
})

describe('red team: storages', { timeout: 120_000 }, () => {
  it('a PVE that echoes the password in its error: the apply fails, and no output nor file holds it', async () => {
    pve.tamper((req) =>
      req.method === 'POST' && req.path === '/storage'
        ? {
            kind: 'answer',
            status: 500,
            body: JSON.stringify({
              data: null,
              message: `create storage failed: mount error: password '${CANARY}' refused\n`,
            }),
          }
        : { kind: 'forward' },
    )
    const apply = await runCli(['apply', '--yes', '-o', 'json'], repo)
    const log = await runCli(['apply', '--yes'], repo)
    pve.tamper(() => ({ kind: 'forward' }))
    expect(apply.code).not.toBe(0)
    for (const out of [apply.stdout, apply.stderr, log.stdout, log.stderr, homeText()])
      expect(out).not.toContain(CANARY)
    expect(log.stdout + log.stderr).toMatch(/create storage failed/)
    // then PVE accepts it: one apply converges, the next diff is empty, still no credential anywhere
    const ok = await runCli(['apply', '--yes'], repo)
    expect(ok.code, ok.stderr).toBe(0)
    expect((await runCli(['diff', '--detailed-exitcode'], repo)).code).toBe(0)
    expect(`${ok.stdout}${ok.stderr}${homeText()}`).not.toContain(CANARY)
  })

  it("foreign storages are untouched: one made by hand and one another cluster entry's ledger owns", async () => {
    const admin = simAdmin(sim)
    await admin.createStorage({ storage: 'byhand', type: 'dir', path: '/srv/byhand' })
    await admin.createStorage({ storage: 'others', type: 'dir', path: '/srv/others' })
    await admin.close()
    // another cluster entry of the same data dir recorded `others` as its own
    const ledgerFile = join(repo.env.HOME as string, '.local/share/proxops/storage-ledger.json')
    const ledger = JSON.parse(readFileSync(ledgerFile, 'utf8')) as { clusters: Record<string, unknown> }
    ledger.clusters.elsewhere = { storages: { others: { fingerprints: {} } } }
    writeFileSync(ledgerFile, JSON.stringify(ledger))
    commit(
      repo,
      {
        'storage/c/smb.yaml': undefined,
        'storage/c/nas.yaml': undefined,
        'clusters/c/resources.yaml': 'resources: []\n',
      },
      'no storages',
    )
    pve.seen.length = 0
    const prune = await runCli(['apply', '--yes', '--prune-budget', 'unlimited', '--allow-empty', 'Storage'], repo)
    expect(prune.code, prune.stderr).toBe(0)
    const writes = pve.seen.filter((s) => s.method !== 'GET').map((s) => `${s.method} ${s.path}`)
    expect(writes.sort()).toEqual(['DELETE /storage/nas', 'DELETE /storage/smb'])
  })

  it('a GET /storage whose item lacks its id makes storages unreadable: nothing written', async () => {
    commit(
      repo,
      { 'storage/c/nas.yaml': NAS, 'clusters/c/resources.yaml': resources(['storage/c/nas.yaml']) },
      'nas again',
    )
    pve.tamper((req) =>
      req.path === '/storage' && req.method === 'GET'
        ? {
            kind: 'rewrite',
            data: (rows) => (rows as Record<string, unknown>[]).map((r) => ({ ...r, storage: undefined })),
          }
        : { kind: 'forward' },
    )
    pve.seen.length = 0
    const apply = await runCli(['apply', '--yes'], repo)
    pve.tamper(() => ({ kind: 'forward' }))
    expect(pve.seen.filter((s) => s.method !== 'GET')).toEqual([])
    expect(apply.stdout + apply.stderr).toMatch(/storages could not be read this cycle/)
  })
})
