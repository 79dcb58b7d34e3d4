/**
 * The operator's second week (issue 45), through the CLI against the simulator, each stumble tried the way a
 * newcomer would, following docs/getting-started.md ("Moving a guest": change spec.node and commit): a guest
 * made with `clone:` moves; a running VM with an ISO in its CD drive moves in one commit and one apply once the
 * drive is declared empty (and the first try says exactly that); a running VM with a snapshot on a local disk,
 * ProxOps' own safety snapshot included, is blocked in diff with the reason and the command, and apply writes
 * nothing (PVE::QemuMigrate::scan_local_volumes); `--target` warns that the plan is partial and never calls the
 * cluster converged.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Simulator } from '@proxops/pve-sim'
import type { PveClient } from '@proxops/pve-client'
import { adminClient, baseEnv, git, makeRepo, proxops, startLab, vmManifest } from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

const started = (text: string) => text.replace('  state: stopped\n', '  state: started\n')
const onNode = (text: string, node: string) => text.replace(/^ {2}node: \w+$/m, `  node: ${node}`)
const withCdrom = (text: string, iso: string) =>
  text.replace('  tags: [e2e]\n', `  hardware:\n    cdrom:\n      iso: ${iso}\n  tags: [e2e]\n`)
const ISO = `apiVersion: proxops/v1alpha1
kind: ISO
metadata:
  name: installer
spec:
  nodes: [pve1, pve2]
  storage: local
  filename: debian-13-netinst.iso
  url: https://downloads.example.invalid/debian-13-netinst.iso
`
const TEMPLATE = vmManifest('base', 9000).replace('kind: VM', 'kind: TemplateVM')
/** a VM cloned from the template: its disks come from it */
const clone = (node: string) =>
  onNode(vmManifest('app', 210), node).replace(/ {2}disks:\n( {4}.*\n)+/, '  clone: base\n')
const FILES = {
  iso: 'iso/lab/installer.yaml',
  base: 'templatevm/lab/base.yaml',
  app: 'vm/lab/app.yaml',
  web: 'vm/lab/web.yaml',
  db: 'vm/lab/db.yaml',
}

describe('the second week: moving guests, --target (issue 45)', () => {
  let sim: Simulator
  let repo: string
  let admin: PveClient
  const run = (...args: string[]) => proxops(args, { cwd: repo, env: baseEnv(repo) })
  const commit = (file: string, text: string, message: string) => {
    writeFileSync(path.join(repo, file), text)
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', message)
  }
  const nodeOf = async (vmid: number) => (await admin.clusterResources('vm')).find((r) => r.vmid === vmid)?.node
  /** what PVE holds of a guest, wherever it is: nothing written means this stays the same */
  const configOf = async (vmid: number) => {
    const node = await nodeOf(vmid)
    return node === undefined ? undefined : (await admin.guestConfig(node, 'qemu', vmid)).values
  }

  beforeAll(async () => {
    sim = await startLab({ taskDurationMs: 20 })
    admin = adminClient(sim)
    repo = await makeRepo(sim, {
      manifests: {
        [FILES.iso]: ISO,
        [FILES.base]: TEMPLATE,
        [FILES.app]: clone('pve1'),
        [FILES.web]: withCdrom(started(vmManifest('web', 211)), 'installer'),
        [FILES.db]: started(vmManifest('db', 212)),
      },
    })
    const first = await run('apply', '--yes')
    expect(first.code, first.stdout + first.stderr).toBe(0)
  })
  afterAll(async () => {
    await admin?.close()
    await sim?.close()
    rmSync(repo, { recursive: true, force: true })
  })

  it('a guest made with clone: moves when spec.node changes (the clone source matters only at create)', async () => {
    commit(FILES.app, clone('pve2'), 'move app')
    const validate = await run('validate')
    expect(validate.code, validate.stdout).toBe(0)
    const diff = await run('diff')
    expect(diff.stdout).toMatch(/# VM\/pve2\/210\(app\) will be migrated/)
    expect(diff.stdout).not.toContain('clone-invalid')
    const apply = await run('apply', '--yes')
    expect(apply.code, apply.stdout + apply.stderr).toBe(0)
    expect(await nodeOf(210)).toBe('pve2')
    expect((await run('diff')).stdout).toContain('No changes. PVE matches git.')
  })

  it('a VM with an ISO in its CD drive: the first try says what to change; then one commit and one apply move it', async () => {
    const web = readFileSync(path.join(repo, FILES.web), 'utf8')
    commit(FILES.web, onNode(web, 'pve2'), 'move web')
    const tried = await run('diff')
    expect(tried.stdout).toContain('migration-refused')
    expect(tried.stdout).toContain(
      'ide2 holds the local ISO local:iso/debian-13-netinst.iso, which PVE does not migrate: set spec.hardware.cdrom to {iso: none} in the same commit (ProxOps then ejects it before the move)',
    )
    commit(FILES.web, onNode(web, 'pve2').replace('iso: installer', 'iso: none'), 'eject and move web')
    const diff = await run('diff')
    expect(diff.stdout).toMatch(
      /# VM\/web: on node pve1, declared on pve2; ejects the local ISO from ide2, then online \(live\) migration to pve2/,
    )
    expect(diff.stdout).toContain(
      '~ spec.hardware.cdrom (ide2): "local:iso/debian-13-netinst.iso,media=cdrom" -> "none,media=cdrom"',
    )
    const apply = await run('apply', '--yes')
    expect(apply.code, apply.stdout + apply.stderr).toBe(0)
    expect(await nodeOf(211)).toBe('pve2')
    expect((await admin.guestStatus('pve2', 'qemu', 211)).status).toBe('running')
    expect((await run('diff')).stdout).toContain('No changes. PVE matches git.')
  })

  it('a running VM with a safety snapshot on a local disk is blocked in diff with the command; apply writes nothing', async () => {
    await admin.waitTaskOk(await admin.createSnapshot('pve1', 'qemu', 212, 'proxops-20261207T101500Z'))
    commit(FILES.db, onNode(started(vmManifest('db', 212)), 'pve2'), 'move db')
    const before = await configOf(212)
    const diff = await run('diff', '--detailed-exitcode')
    expect(diff.code).toBe(2)
    expect(diff.stdout).toContain(
      'scsi0 (local-lvm:vm-212-disk-0) is referenced by snapshot proxops-20261207T101500Z (a ProxOps safety snapshot), and PVE cannot migrate a local disk with a snapshot while the VM runs: delete it once no longer needed (qm delsnapshot 212 proxops-20261207T101500Z); not moved [migration-refused]',
    )
    expect(diff.stdout).not.toMatch(/will be migrated/)
    const apply = await run('apply', '--yes')
    expect(apply.code).toBe(1)
    expect(apply.stdout).not.toMatch(/~ VM\/pve2\/212/)
    expect(await nodeOf(212)).toBe('pve1')
    expect(await configOf(212)).toEqual(before)
  })

  it('--target warns that the plan is partial, and the result line never calls the cluster converged', async () => {
    // db is still blocked from moving (above): the cluster does not match git, the targeted VM does
    const diff = await run('diff', '--target', 'VM/app')
    expect(diff.code).toBe(0)
    expect(diff.stderr).toContain(
      'warning: --target VM/app: the plan is partial; it covers only these objects and what they depend on, and changes elsewhere in the cluster are neither shown nor applied',
    )
    expect(diff.stdout).toContain(
      'No changes to VM/app and what they depend on. Partial plan (--target VM/app): the rest of the cluster was not planned.',
    )
    expect(diff.stdout).not.toContain('PVE matches git')
    const apply = await run('apply', '--target', 'VM/app', '--yes')
    // as Terraform's -target: exit 0 when the targeted objects converged (docs/cli.md, "Exit codes")
    expect(apply.code, apply.stdout + apply.stderr).toBe(0)
    expect(apply.stderr).toContain('warning: --target VM/app: the plan is partial')
    expect(apply.stdout).toMatch(
      /\[lab\] targeted objects converged \(--target VM\/app\); the rest of the cluster was not planned \(commit [0-9a-f]{12}\)/,
    )
    expect(apply.stdout).not.toMatch(/\[lab\] converged/)
    const whole = await run('apply', '--yes')
    expect(whole.code).toBe(1)
    expect(whole.stdout).toMatch(/\[lab\] blocked/)
  })
})
