/**
 * Storages and the datacenter options through the CLI (pve-storage PVE::API2::Storage::Config, pve-manager
 * PVE::API2::Cluster set_options): apply creates an NFS, a CIFS and a PBS storage and sets two datacenter options
 * with credentials from SOPS and the next diff is empty; no credential reaches any output nor the ledger file; a
 * password rotated in SOPS is sent in exactly one update; adopt writes a reference to fill in, never a value; a
 * prune removes only a storage the ledger records, never one made by hand nor one that holds a volume.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Simulator } from '@proxops/pve-sim'
import type { PveClient } from '@proxops/pve-client'
import { encryptSops } from '@proxops/sops'
import {
  CANARY,
  adminClient,
  baseEnv,
  findCanaries,
  homeFor,
  makeRepo,
  proxops,
  recipient,
  startLab,
  transcript,
  replaceManifests,
  closeLab,
} from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

const SMB_PW = 'e2e-smbpw-CANARY-3c9d'
const SMB_PW2 = 'e2e-smbpw2-CANARY-8e21'
const PBS_PW = 'e2e-pbspw-CANARY-44f0'
const PBS_KEY = JSON.stringify({ kdf: null, data: 'e2e-keydata-CANARY-19ab', fingerprint: '12:34:56' })
const ALL = [SMB_PW, SMB_PW2, PBS_PW, 'e2e-keydata-CANARY-19ab']

let sim: Simulator
let repo: string
let admin: PveClient
const run = async (args: string[]) => {
  const r = await proxops(args, { cwd: repo, env: baseEnv(repo) })
  transcript.push(r.stdout, r.stderr)
  return r
}
const storageYaml = (name: string, spec: string) =>
  `apiVersion: proxops/v1alpha1\nkind: Storage\nmetadata:\n  name: ${name}\nspec:\n${spec}`
const FILES = {
  'cluster-options/lab/datacenter.yaml':
    'apiVersion: proxops/v1alpha1\nkind: ClusterOptions\nmetadata:\n  name: datacenter\nspec:\n  keyboard: de\n  migration: {type: secure, network: 10.0.0.0/24}\n',
  'storage/lab/nas.yaml': storageYaml(
    'nas',
    '  type: nfs\n  server: 10.0.0.5\n  export: /export/pve\n  content: [iso, images]\n',
  ),
  'storage/lab/smb.yaml': storageYaml(
    'smb',
    '  type: cifs\n  server: 10.0.0.9\n  share: vms\n  username: svc\n  password-ref: secrets.smb-pw\n',
  ),
  'storage/lab/backup.yaml': storageYaml(
    'backup',
    '  type: pbs\n  server: pbs.lan\n  datastore: store1\n  username: sync@pbs\n  password-ref: secrets.pbs-pw\n  encryption-key-ref: secrets.pbs-key\n  prune-backups:\n    keep-daily: 7\n',
  ),
}

async function writeSecrets(smbPw: string): Promise<void> {
  const plain = `secrets:\n  pve-user: root@pam\n  pve-token-id: proxops\n  pve-token: ${CANARY.token}\n  smb-pw: ${smbPw}\n  pbs-pw: ${PBS_PW}\n  pbs-key: ${JSON.stringify(PBS_KEY)}\n`
  writeFileSync(
    path.join(repo, 'clusters/lab/secrets.sops.yaml'),
    await encryptSops(plain, { recipients: [recipient()], file: 'secrets.sops.yaml' }),
  )
}
function commit(files: Record<string, string>): void {
  replaceManifests(repo, ['storage/lab', 'cluster-options/lab'], files, 'storages')
}
/** every file under the operator's HOME (the data dir, with the ledger) */
function homeText(): string {
  const out: string[] = []
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else out.push(readFileSync(p, 'utf8'))
    }
  }
  walk(homeFor(repo))
  return out.join('\n')
}

beforeAll(async () => {
  sim = await startLab()
  repo = await makeRepo(sim, { manifests: {} })
  admin = adminClient(sim)
  await writeSecrets(SMB_PW)
  commit(FILES)
})
afterAll(() => closeLab(admin, sim, repo))

describe('Storage lifecycle', () => {
  it('converges in one apply; a rotated password is one update; no credential in any output or file', async () => {
    const created = await run(['apply', '--yes'])
    expect(created.stderr).not.toMatch(/proxops: error/)
    expect(created.code).toBe(0)
    expect(created.stdout).toContain('4 ok')
    expect(await admin.clusterOptions()).toMatchObject({ keyboard: 'de', migration: 'network=10.0.0.0/24,type=secure' })
    expect((await run(['diff', '--detailed-exitcode'])).code).toBe(0)
    const names = (await admin.storageConfigs()).map((s) => s.storage)
    expect(names).toEqual(expect.arrayContaining(['backup', 'nas', 'smb']))

    await writeSecrets(SMB_PW2)
    commit(FILES)
    const diff = await run(['diff', '--detailed-exitcode'])
    expect(diff.code).toBe(2)
    expect(diff.stdout).toMatch(/Storage\/smb/)
    const rotated = await run(['apply', '--yes'])
    expect(rotated.code).toBe(0)
    expect(rotated.stdout).toContain('1 ok')
    expect((await run(['diff', '--detailed-exitcode'])).code).toBe(0)

    const seen = `${transcript.join('\n')}\n${homeText()}`
    expect(findCanaries(seen)).toEqual([])
    expect(ALL.filter((c) => seen.includes(c))).toEqual([])
  })

  it('adopt writes references to fill in; prune takes only what the ledger records and no storage with a volume', async () => {
    await admin.createStorage({ storage: 'byhand', type: 'dir', path: '/srv/byhand' })
    commit({})
    const adopted = await run(['adopt', '--cluster', 'lab'])
    expect(adopted.code).toBe(0)
    const smb = readFileSync(path.join(repo, 'storage/lab/smb.yaml'), 'utf8')
    expect(smb).toContain('password-ref: secrets.storage-smb-password')
    expect(ALL.filter((c) => `${smb}${adopted.stdout}${adopted.stderr}`.includes(c))).toEqual([])
    expect(readFileSync(path.join(repo, 'storage/lab/nas.yaml'), 'utf8')).toContain('server: 10.0.0.5')

    // nas holds a guest disk made by hand: its prune is blocked naming the volume; byhand and local are not ours
    await admin.waitTaskOk(await admin.createGuest('pve1', 'qemu', { vmid: 191, memory: 256, scsi0: 'nas:1' }))
    commit({})
    const pruned = await run(['apply', '--yes', '--prune-budget', 'unlimited', '--allow-empty', 'Storage'])
    expect(pruned.stderr).not.toMatch(/proxops: error/)
    expect(pruned.stdout).toMatch(/Storage\/nas.*still holds 1 volume\(s\) \(nas:191\/vm-191-disk-0/)
    // the datacenter options left git: managed no more, never reset
    expect((await admin.clusterOptions()).keyboard).toBe('de')
    const left = (await admin.storageConfigs()).map((s) => s.storage).sort()
    expect(left).toEqual(['byhand', 'local', 'local-lvm', 'local-zfs', 'nas'])
  })
})
