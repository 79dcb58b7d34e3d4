/**
 * Where a newcomer got stuck (issue 45, item 5), each tried the way they tried it, through the CLI against the
 * simulator: a repository from `proxops init` that validates at once and, once `proxops-sops set` put the token in,
 * applies; an error that names the field by its path; a misspelt reference answered with the declared name;
 * `apply PLANFILE` as in Terraform; a guard that names the flag that lifts it. Own HOME per test, no secret in any
 * output.
 */
import { describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { decryptSops } from '@proxops/sops'
import {
  CANARY,
  TOKEN_ID,
  errorLines,
  git,
  makeRepo,
  proxops,
  transcript,
  vmManifest,
  useLab,
  transcriptCanaries,
} from './harness.js'

const SOPS_BIN = fileURLToPath(new URL('../../../sops/dist/bin.js', import.meta.url))

const lab = useLab({ seed: 45 }, { testTimeout: 120_000 })

/** a newcomer's machine: an empty HOME of its own, no key in the environment (SOPS' default place is looked at) */
function newcomer(): { home: string; env: NodeJS.ProcessEnv } {
  const home = lab.tmp('proxops-newcomer-home-')
  return { home, env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1', LANG: 'C' } }
}

const initArgs = (...more: string[]): string[] => [
  'init',
  '--cluster',
  'homelab',
  '--endpoint',
  lab.sim.url,
  '--fingerprint',
  lab.sim.fingerprint!,
  '--token-id',
  TOKEN_ID,
  '--node',
  'pve1',
  '--node',
  'pve2',
  ...more,
]

describe('proxops init', () => {
  it('scaffolds a repository that validates at once, with a new age key in the SOPS default place', async () => {
    const { home, env } = newcomer()
    const root = path.join(lab.tmp('proxops-init-'), 'ops')
    const init = await proxops([...initArgs(), root], { cwd: path.dirname(root), env })
    expect(init.stderr).toBe('')
    expect(init.code).toBe(0)
    const keyFile = path.join(home, '.config', 'sops', 'age', 'keys.txt')
    expect(statSync(keyFile).mode & 0o777).toBe(0o600)
    const recipient = /# public key: (age1\w+)/.exec(readFileSync(keyFile, 'utf8'))![1]!
    expect(init.stdout).toContain(`age key: created ${keyFile} (public key ${recipient})`)
    expect(init.stdout).toContain(
      'proxops-sops set ops/clusters/homelab/secrets.sops.yaml secrets.proxops-token --stdin',
    )
    for (const f of [
      '.git',
      '.sops.yaml',
      'clusters/homelab/config.yaml',
      'clusters/homelab/resources.yaml',
      'clusters/homelab/secrets.sops.yaml',
      'vm/homelab/first-vm.yaml',
    ])
      expect(existsSync(path.join(root, f)), f).toBe(true)
    // the credentials are encrypted to that key, token id split as PVE's API wants it
    const secrets = readFileSync(path.join(root, 'clusters/homelab/secrets.sops.yaml'), 'utf8')
    expect(secrets).toContain(`recipient: ${recipient}`)
    expect(secrets).not.toContain('root@pam')
    const doc = await decryptSops(secrets, { discovery: { env: {}, homeDir: home } })
    expect(doc.get('secrets.proxops-user')?.reveal()).toBe('root@pam')
    expect(doc.get('secrets.proxops-token-id')?.reveal()).toBe('proxops')

    const validate = await proxops(['validate'], { cwd: root, env })
    expect({ code: validate.code, stdout: validate.stdout }).toEqual({
      code: 0,
      stdout: 'homelab: valid, 1 resource from 1 file (1 VM)\n',
    })

    // a second run writes nothing over the first; an existing key is used, never rewritten
    const key = readFileSync(keyFile, 'utf8')
    const again = await proxops([...initArgs(), root], { cwd: root, env })
    expect(again.code).toBe(1)
    expect(errorLines(again.stderr)).toEqual([
      `proxops: error: init writes no file that exists, and clusters/homelab/config.yaml, clusters/homelab/resources.yaml, vm/homelab/first-vm.yaml, clusters/homelab/secrets.sops.yaml already exist in ${root}; nothing was written`,
    ])
    // a second cluster in the same repository: encrypted to the keys of the .sops.yaml the first one wrote
    const sopsYaml = readFileSync(path.join(root, '.sops.yaml'), 'utf8')
    const edge = await proxops(
      [
        'init',
        '--cluster',
        'edge',
        '--endpoint',
        'https://edge.example.net:8006',
        '--token-id',
        'ops@pve!edge',
        '--node',
        'edge1',
      ],
      { cwd: path.join(root, 'clusters'), env },
    )
    expect(edge.stdout).toContain(
      `wrote clusters/edge/config.yaml, clusters/edge/resources.yaml, clusters/edge/secrets.sops.yaml, vm/edge/first-vm.yaml in ${root}`,
    )
    expect(edge.stdout).not.toContain('age key:')
    expect(readFileSync(path.join(root, '.sops.yaml'), 'utf8')).toBe(sopsYaml)
    expect(readFileSync(path.join(root, 'clusters/edge/secrets.sops.yaml'), 'utf8')).toContain(
      `recipient: ${recipient}`,
    )
    expect((await proxops(['validate'], { cwd: root, env })).stdout).toBe(
      'edge: valid, 1 resource from 1 file (1 VM)\nhomelab: valid, 1 resource from 1 file (1 VM)\n',
    )
    const other = path.join(lab.tmp('proxops-init-'), 'second')
    const second = await proxops([...initArgs(), other], { cwd: root, env })
    expect(second.stdout).toContain(`age key: using ${keyFile} (public key ${recipient})`)
    expect(readFileSync(keyFile, 'utf8')).toBe(key)
  })

  it('puts the key where it is told, and refuses flags that would not validate, writing nothing', async () => {
    const { env } = newcomer()
    const root = lab.tmp('proxops-init-')
    const keyFile = path.join(lab.tmp('proxops-keys-'), 'ops.agekey')
    const bad = await proxops([...initArgs('--age-key-file', keyFile), '--node', 'pve_3'], { cwd: root, env })
    expect(bad.code).toBe(1)
    expect(errorLines(bad.stderr)[0]).toMatch(
      /^proxops: error: init's flags make a repository that does not validate: clusters\/homelab\/config\.yaml:6:\d+ node-name-invalid pve\.clusters\.homelab\.nodes\[2\]: node name "pve_3" is invalid: .*; nothing was written$/,
    )
    expect(existsSync(path.join(root, 'clusters'))).toBe(false)
    const token = await proxops(
      ['init', '--cluster', 'x', '--endpoint', lab.sim.url, '--token-id', 'gitops', '--node', 'pve1'],
      {
        cwd: root,
        env,
      },
    )
    expect(errorLines(token.stderr)).toEqual([
      "proxops: error: --token-id gitops: write it as PVE names it, user@realm!name (such as 'proxops@pve!gitops')",
    ])
    const escape = await proxops(
      ['init', '--cluster', '../../x', '--endpoint', lab.sim.url, '--token-id', TOKEN_ID, '--node', 'pve1'],
      {
        cwd: root,
        env,
      },
    )
    expect(errorLines(escape.stderr)).toEqual([
      'proxops: error: --cluster "../../x": a cluster name is one word, such as homelab',
    ])
    const ok = await proxops(initArgs('--age-key-file', keyFile), { cwd: root, env })
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain(`age key: created ${keyFile}`)
    expect(ok.stdout).toContain(`export SOPS_AGE_KEY_FILE=${keyFile}`)
    expect((await proxops(['validate'], { cwd: root, env: { ...env, SOPS_AGE_KEY_FILE: keyFile } })).code).toBe(0)
  })

  it('then proxops-sops set puts the token in from stdin, and the first apply creates the VM', async () => {
    const { env } = newcomer()
    const root = lab.tmp('proxops-init-')
    expect((await proxops(initArgs('--vmid', '4500'), { cwd: root, env })).code).toBe(0)
    const file = 'clusters/homelab/secrets.sops.yaml'
    const before = readFileSync(path.join(root, file), 'utf8')
    const set = spawnSync(process.execPath, [SOPS_BIN, 'set', file, 'secrets.proxops-token', '--stdin'], {
      cwd: root,
      env,
      input: `${CANARY.token}\n`,
      encoding: 'utf8',
    })
    transcript.push(set.stdout, set.stderr)
    expect({ status: set.status, out: set.stdout + set.stderr }).toEqual({ status: 0, out: '' })
    const after = readFileSync(path.join(root, file), 'utf8')
    expect(after).not.toContain(CANARY.token)
    const recipients = (t: string) => [...t.matchAll(/recipient: (age1\w+)/g)].map((m) => m[1])
    expect(recipients(after)).toEqual(recipients(before))
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', 'proxops init')
    const apply = await proxops(['apply', '--yes'], { cwd: root, env })
    expect(apply.code, apply.stderr).toBe(0)
    expect(lab.sim.control.guest(4500)).toMatchObject({ node: 'pve1' })
    expect((await proxops(['diff', '--detailed-exitcode'], { cwd: root, env })).code).toBe(0)
  })
})

describe('errors a newcomer meets', () => {
  it('name the field by its full path, and a misspelt reference gets the declared name', async () => {
    const root = await makeRepo(lab.sim, {
      manifests: {
        'vm/lab/web.yaml': vmManifest('web', 4600).replace('    type: host\n', ''),
        'vm/lab/app.yaml': vmManifest('app', 4601).replace(
          '  disks:\n    - storage: local-lvm\n      size: 4GiB\n      interface: scsi0\n',
          '  clone: base-tmpl\n',
        ),
        'templatevm/lab/base.yaml': vmManifest('base-tmpl8', 4602).replace('kind: VM', 'kind: TemplateVM'),
        'vm/lab/db.yaml': vmManifest('db', 4603).replace('bridge: vmbr0', 'bridge: 7'),
      },
    })
    lab.removeAfter(root)
    const r = await proxops(['validate'], { cwd: root })
    expect(r.code).toBe(1)
    const lines = r.stdout.split('\n')
    expect(lines).toContain('vm/lab/web.yaml:10:3 field-required missing required field "spec.cpu.type"')
    expect(lines).toContain('vm/lab/db.yaml:18:15 field-type spec.networks[0].bridge: must be a string')
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^vm\/lab\/app\.yaml:\d+:\d+ dependency-unknown TemplateVM "base-tmpl" is not in cluster lab's composition: did you mean "base-tmpl8"\? /,
      ),
    )
  })

  it('apply PLANFILE is apply --plan PLANFILE; a file that is not there is answered with the exact forms', async () => {
    const root = await lab.repo({ manifests: { 'vm/lab/one.yaml': vmManifest('one', 4700) } })
    writeFileSync(path.join(root, '.gitignore'), '*.plan.json\n')
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', 'ignore plans')
    expect((await proxops(['diff', '--out', 'my.plan.json'], { cwd: root })).code).toBe(0)
    const missing = await proxops(['apply', 'my.plna.json', '--yes'], { cwd: root })
    expect(errorLines(missing.stderr)).toEqual([
      'proxops: error: apply\'s argument is a plan file saved by diff --out, and there is no file "my.plna.json": save it with proxops diff --out my.plna.json, then apply it with proxops apply --plan my.plna.json; nothing was applied',
    ])
    const target = await proxops(['apply', 'VM/one', '--yes'], { cwd: root })
    expect(errorLines(target.stderr)[0]).toContain(
      '; for one object: proxops apply --target VM/one; nothing was applied',
    )
    const both = await proxops(['apply', 'my.plan.json', '--plan', 'my.plan.json', '--yes'], { cwd: root })
    expect(both.code).toBe(1)
    expect(lab.sim.control.guest(4700)).toBeUndefined()
    const apply = await proxops(['apply', 'my.plan.json', '--yes'], { cwd: root })
    expect(apply.code, apply.stderr).toBe(0)
    expect(lab.sim.control.guest(4700)).toBeDefined()
  })

  it('the prune-ratio guard names the flag that lifts it, and that flag does', async () => {
    const manifests = {
      'vm/lab/a.yaml': vmManifest('a', 4800),
      'vm/lab/b.yaml': vmManifest('b', 4801),
      'vm/lab/c.yaml': vmManifest('c', 4802),
    }
    // a cluster entry of its own: what other tests made on the simulator is not its to prune
    const root = await lab.repo({ manifests, cluster: 'guards' })
    expect((await proxops(['apply', '--yes'], { cwd: root })).code).toBe(0)
    writeFileSync(path.join(root, 'clusters/guards/resources.yaml'), 'resources:\n  - ../../vm/lab/a.yaml\n')
    git(root, 'commit', '-qam', 'two of three removed')
    const held = await proxops(['diff', '--prune-budget', 'unlimited'], { cwd: root })
    expect(held.stdout).toContain('this cycle would prune 2 of 3 proxops-tagged VM (more than 50%)')
    expect(held.stdout).toContain('no VM is pruned this cycle (pass --allow-empty VM to accept)')
    const lifted = await proxops(['apply', '--yes', '--prune-budget', 'unlimited', '--allow-empty', 'VM'], {
      cwd: root,
    })
    expect(lifted.code, lifted.stderr).toBe(0)
    expect([lab.sim.control.guest(4801), lab.sim.control.guest(4802)]).toEqual([undefined, undefined])
    expect(lab.sim.control.guest(4800)).toBeDefined()
  })
})

describe('secrets', () => {
  it('no canary reached any output of this file', () => {
    expect(transcriptCanaries()).toEqual([])
  })
})
