/**
 * The first day with a real cluster (issue 29), through the CLI against the simulator: a manifest written
 * for the reference design (keys left empty, no git token in local mode), secrets masked by role, an endpoint
 * pinned only once it worked, a saved plan of two clusters applied whole or not at all, a slow template
 * conversion waited for, and the habits of Terraform and kubectl (`plan`, `show`, `--target`, `-o yaml`,
 * `status KIND/name`).
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parse as parseYaml } from 'yaml'
import { encryptSops } from '@proxops/sops'
import {
  AGE_KEY_FILE,
  CANARY,
  CTT_DEB,
  adminClient,
  errorLines,
  findCanaries,
  freePort,
  git,
  startLab,
  vmManifest,
  useLab,
  runIn,
  transcriptCanaries,
} from './harness.js'

const lab = useLab({ estate: { guests: 2 }, seed: 29 }, { testTimeout: 300_000 })

const recipient = (): string => /public key: (age1[0-9a-z]+)/.exec(readFileSync(AGE_KEY_FILE, 'utf8'))?.[1] as string

/** Rewrites a cluster's SOPS file with these decrypted contents. */
async function secrets(root: string, cluster: string, plain: string): Promise<void> {
  writeFileSync(
    path.join(root, 'clusters', cluster, 'secrets.sops.yaml'),
    await encryptSops(plain, { recipients: [recipient()], file: 'secrets.sops.yaml' }),
  )
}

const edit = (file: string, change: (text: string) => string): void =>
  writeFileSync(file, change(readFileSync(file, 'utf8')))

describe('1. a manifest the reference accepts: keys left empty, no git token in local mode', () => {
  it('validates and converges', async () => {
    // the reference's VM, with every child of hardware, options, tags and labels commented out
    const manifest = `apiVersion: proxops/v1alpha1
kind: VM
metadata:
  name: ref-vm
  labels:
    # team: web
spec:
  node: pve1
  vmid: 170
  state: stopped
  memory: 512MiB
  cpu:
    type: host
    cores: 1
  disks:
    - storage: local-lvm
      size: 4GiB
  networks:
    - bridge: vmbr0
  hardware:
    # machine: q35
    # tpm:
    #   version: v2.0
  options:
    # onboot: true
  tags:
    # - web
`
    // the reference's cluster config names the git token key, which a local repository's SOPS file lacks
    const root = await lab.repo({
      cluster: 'ref',
      manifests: { 'vm/ref/ref-vm.yaml': manifest },
      // a config section left empty too: not there, as when it is absent
      clusterExtra: '      safety-snapshots:\n        # keep: 3',
    })
    edit(path.join(root, 'clusters/ref/config.yaml'), (t) =>
      t.replace(
        '          token: pve-token\n',
        '          token: pve-token\n        git:\n          token: proxops-git-token\n',
      ),
    )
    git(root, 'commit', '-qam', 'reference-style config')
    const validate = await runIn(root, ['validate'])
    expect(validate.code, validate.stdout + validate.stderr).toBe(0)
    expect(validate.stdout).toMatch(/^ref: valid, 1 resource/m)
    const apply = await runIn(root, ['apply', '--yes'])
    expect(apply.code, apply.stdout + apply.stderr).toBe(0)
    expect(apply.stdout).toMatch(/Apply complete for cluster ref: 1 ok, 0 failed/)
    expect(lab.sim.control.guest(170)?.config).toMatchObject({
      memory: '512',
      tags: expect.stringContaining('proxops'),
    })
    const again = await runIn(root, ['diff', '--detailed-exitcode'])
    expect(again.code, again.stdout).toBe(0)
    expect(again.stdout).toContain('No changes. PVE matches git.')
  })
})

describe('2. secrets masked by role: a token id of proxops under ticket auth', () => {
  // the reference's own fixture: every key in the file, ticket auth naming the user and the password
  const fixture = `secrets:\n  pve-user: root@pam\n  pve-token-id: proxops\n  pve-token: ${CANARY.token}\n  pve-password: ${CANARY.password}\n  proxops-git-token: ${CANARY.gitToken}\ncloud-init:\n  ssh-keys:\n    main: ${CANARY.sshKey}\n  passwords:\n    default: ${CANARY.ciPassword}\n`
  const ticket = async (manifests: Record<string, string>): Promise<string> => {
    const root = await lab.repo({ sops: true, manifests })
    edit(path.join(root, 'clusters/lab/config.yaml'), (t) =>
      t
        .replace('          token-id: pve-token-id\n          token: pve-token\n', '          password: pve-password\n')
        .replace('      secrets-file:', '      auth: ticket\n      secrets-file:'),
    )
    await secrets(root, 'lab', fixture)
    git(root, 'commit', '-qam', 'ticket auth')
    return root
  }

  it('masks nothing but secrets: the plan header, the ownership tag and adopted files stay whole, and they validate', async () => {
    const root = await ticket({ 'vm/lab/web.yaml': vmManifest('web', 171, { cloudInit: true }) })
    const diff = await runIn(root, ['diff'])
    expect(diff.code, diff.stderr).toBe(0)
    expect(diff.stdout).toContain('ProxOps will perform the following actions:')
    // a field whose value comes from a secret reference is masked where it is rendered, and nothing else is
    expect(diff.stdout).toContain('+ spec.cloud-init-data.ci-password-ref (cipassword) = (sensitive)')
    expect(diff.stdout).toContain('+ spec.tags (tags) = "e2e;proxops;proxops.lab"')
    const masked = diff.stdout.split('\n').filter((l) => l.includes('(sensitive)'))
    for (const l of masked) expect(l).toMatch(/spec\.cloud-init-data\.(ci-password-ref|ssh-key-refs)/)
    expect((await runIn(root, ['apply', '--yes'])).code).toBe(0)
    const adopt = await runIn(root, ['adopt', '--cluster', 'lab'])
    expect(adopt.code, adopt.stdout + adopt.stderr).toBe(0)
    const written = [...adopt.stdout.matchAll(/^adopt: wrote (\S+)/gm)].map((m) => m[1]!)
    expect(written.length).toBeGreaterThan(0)
    for (const file of written) {
      const text = readFileSync(path.join(root, file), 'utf8')
      expect(text).toMatch(/^apiVersion: proxops\/v1alpha1$/m)
      expect(text).not.toContain('(sensitive)')
    }
    // pasted as adopt prints them, the adopted files validate
    const lines = adopt.stdout.split('\n')
    const from = lines.findIndex((l) => /^adopt: (append these lines to|write this as)/.test(l))
    const paste = lines.slice(from + 1, lines.indexOf('adopt: end of lines'))
    const composition = path.join(root, 'clusters/lab/resources.yaml')
    edit(composition, (t) => (/^adopt: write this as/.test(lines[from]!) ? '' : t) + `${paste.join('\n')}\n`)
    const valid = await runIn(root, ['validate'])
    expect(valid.code, valid.stdout + valid.stderr).toBe(0)
    const all = [diff, adopt, valid].map((r) => r.stdout + r.stderr).join('')
    expect(findCanaries(all)).toEqual([])
  })

  it('adopt never writes a masked value into a name: the file is refused, naming the fields', async () => {
    const root = await ticket({})
    const victim = lab.sim.control.guests().find((g) => !g.config.tags?.includes('proxops'))!
    const nameKey = victim.type === 'lxc' ? 'hostname' : 'name'
    const before = victim.config[nameKey] ?? `guest-${victim.vmid}`
    // someone named a guest after the cloud-init password
    lab.sim.control.driftSet(victim.vmid, nameKey, CANARY.ciPassword)
    try {
      const adopt = await runIn(root, ['adopt', '--cluster', 'lab', '--vmid', String(victim.vmid)])
      expect(adopt.code).toBe(1)
      expect(adopt.stdout).toMatch(
        /^adopt: NOT writing \S+ \((VM|LXC|TemplateVM|TemplateCT)\): metadata\.name, spec\.(pve-name|dns\.hostname)\S* would hold a masked secret/m,
      )
      expect(errorLines(adopt.stderr)).toEqual([
        'proxops: error: 1 file(s) were not written: they would hold a masked secret (see above)',
      ])
      expect(findCanaries(adopt.stdout + adopt.stderr)).toEqual([])
    } finally {
      lab.sim.control.driftSet(victim.vmid, nameKey, before)
    }
  })

  it('refuses to start on a secret too short to mask, naming it but never its value', async () => {
    const root = await ticket({})
    await secrets(root, 'lab', fixture.replace(CANARY.password, 'pve1234'))
    git(root, 'commit', '-qam', 'a short password')
    const requests = lab.sim.stats.requests.length
    const r = await runIn(root, ['diff'])
    expect(r.code).toBe(1)
    expect(errorLines(r.stderr)).toEqual([
      'proxops: error: clusters/lab/secrets.sops.yaml: secrets.pve-password (secrets.pve.password of cluster lab) cannot be kept out of the output: it is 7 characters long: a secret shorter than 8 characters cannot be masked without hiding ordinary words; use a longer, random value (ProxOps does not start with it)',
    ])
    expect(r.stderr).not.toContain('pve1234')
    expect(lab.sim.stats.requests.length).toBe(requests)
    // validate says it too, before any command runs into it
    const v = await runIn(root, ['validate'])
    expect(v.code).toBe(1)
    expect(v.stdout).toMatch(/secrets-unavailable secrets\.pve-password .* cannot be kept out of the output/)
  })
})

describe('3. an endpoint is pinned only once it worked', () => {
  it('a wrong first port, once fixed, works without --accept-endpoint', async () => {
    const wrong = `https://127.0.0.1:${await freePort()}`
    const root = await lab.repo({ manifests: {}, baseUrl: wrong })
    const first = await runIn(root, ['diff'])
    expect(first.code).toBe(1)
    edit(path.join(root, 'clusters/lab/config.yaml'), (t) => t.replace(wrong, lab.sim.url))
    git(root, 'commit', '-qam', 'the right port')
    const fixed = await runIn(root, ['diff'])
    expect(fixed.code, fixed.stderr).toBe(0)
    expect(fixed.stderr).toMatch(/endpoint pinned for SOPS credentials .*cluster=lab/)
  })

  it('a missing fingerprint, once added, works without --accept-endpoint', async () => {
    const root = await lab.repo({ manifests: {}, fingerprint: null })
    const first = await runIn(root, ['diff'])
    expect(first.code).toBe(1)
    expect(errorLines(first.stderr).join('\n')).toMatch(/tls/)
    edit(
      path.join(root, 'clusters/lab/config.yaml'),
      (t) => `${t}      tls:\n        fingerprint: "${lab.sim.fingerprint ?? ''}"\n`,
    )
    git(root, 'commit', '-qam', 'pin the certificate')
    const fixed = await runIn(root, ['diff'])
    expect(fixed.code, fixed.stderr).toBe(0)
  })

  it('a second cluster with the same token: the refusal says what changed and the one command that accepts it', async () => {
    const other = await startLab({ nodes: ['edge1'] })
    try {
      const root = await lab.repo({ manifests: {} })
      expect((await runIn(root, ['diff'])).code).toBe(0)
      // a second cluster entry with the same (copied) SOPS credentials, pointing elsewhere
      mkdirSync(path.join(root, 'clusters/edge'))
      copyFileSync(
        path.join(root, 'clusters/lab/secrets.sops.yaml'),
        path.join(root, 'clusters/edge/secrets.sops.yaml'),
      )
      writeFileSync(
        path.join(root, 'clusters/edge/config.yaml'),
        readFileSync(path.join(root, 'clusters/lab/config.yaml'), 'utf8')
          .replace('    lab:', '    edge:')
          .replace(lab.sim.url, other.url)
          .replace('[pve1, pve2]', '[edge1]')
          .replace(lab.sim.fingerprint ?? '', other.fingerprint ?? ''),
      )
      writeFileSync(path.join(root, 'clusters/edge/resources.yaml'), 'resources: []\n')
      git(root, 'add', '-A')
      git(root, 'commit', '-qm', 'a second cluster')
      const refused = await runIn(root, ['diff'])
      expect(refused.code).toBe(1)
      const line = errorLines(refused.stderr)[0] ?? ''
      expect(line).toMatch(
        /^proxops: error: clusters\/edge\/config\.yaml endpoint-refused pve\.clusters\.edge\.base-url: this entry is new and would send SOPS credentials that are pinned to https:\/\/127\.0\.0\.1:\d+ \(cluster lab\) to https:\/\/127\.0\.0\.1:\d+ \(.*endpoint-pins\.json\); if that is intended, accept it with: proxops diff --cluster edge --accept-endpoint edge$/,
      )
      const command = line.split('accept it with: ')[1]!.split(' ').slice(1)
      expect((await runIn(root, command)).code).toBe(0)
      expect((await runIn(root, ['diff'])).code).toBe(0)
    } finally {
      await other.close()
    }
  })
})

describe('4. a saved plan of two clusters applies whole or not at all', () => {
  it('one stale cluster: nothing is written anywhere', async () => {
    // another PVE cluster (its own node names: the same answer of /cluster/status would be one cluster twice)
    const b = await startLab({ nodes: ['edge1'] })
    try {
      const root = await lab.repo({ cluster: 'a', manifests: { 'vm/a/one.yaml': vmManifest('one', 180) } })
      mkdirSync(path.join(root, 'clusters/b'))
      mkdirSync(path.join(root, 'vm/b'), { recursive: true })
      writeFileSync(path.join(root, 'vm/b/two.yaml'), vmManifest('two', 181, { node: 'edge1' }))
      copyFileSync(path.join(root, 'clusters/a/secrets.sops.yaml'), path.join(root, 'clusters/b/secrets.sops.yaml'))
      writeFileSync(
        path.join(root, 'clusters/b/config.yaml'),
        readFileSync(path.join(root, 'clusters/a/config.yaml'), 'utf8')
          .replace('    a:', '    b:')
          .replace('[pve1, pve2]', '[edge1]')
          .replace(lab.sim.url, b.url)
          .replace(lab.sim.fingerprint ?? '', b.fingerprint ?? ''),
      )
      writeFileSync(path.join(root, 'clusters/b/resources.yaml'), 'resources:\n  - ../../vm/b/two.yaml\n')
      git(root, 'add', '-A')
      git(root, 'commit', '-qm', 'two clusters')
      const first = await runIn(root, ['apply', '--yes'])
      expect(first.code, first.stdout + first.stderr).toBe(0)
      // both VMs get more memory in one commit, saved as one plan
      edit(path.join(root, 'vm/a/one.yaml'), (t) => t.replace('memory: 512MiB', 'memory: 768MiB'))
      edit(path.join(root, 'vm/b/two.yaml'), (t) => t.replace('memory: 512MiB', 'memory: 768MiB'))
      git(root, 'commit', '-qam', 'more memory')
      const saved = await runIn(root, ['diff', '--out', 'both.plan.json'])
      expect(saved.code, saved.stderr).toBe(0)
      // then cluster b changes by hand: its part of the plan is stale
      const admin = adminClient(b)
      try {
        await admin.updateConfig('edge1', 'qemu', 181, { description: 'edited by hand' }, { sync: true })
      } finally {
        await admin.close()
      }
      const writesA = lab.sim.stats.writes()
      const writesB = b.stats.writes()
      const applied = await runIn(root, ['apply', '--plan', 'both.plan.json', '--yes'])
      expect(applied.code).toBe(1)
      const errors = errorLines(applied.stderr)
      expect(errors[0]).toMatch(/^proxops: error: cluster b: .*digest/)
      expect(errors.at(-1)).toBe(
        'proxops: error: nothing was applied: the saved plan both.plan.json is refused for cluster b (see above), and a saved plan applies whole or not at all; run proxops diff --out both.plan.json again',
      )
      expect(lab.sim.stats.writes()).toBe(writesA)
      expect(b.stats.writes()).toBe(writesB)
      expect(lab.sim.control.guest(180)?.config.memory).toBe('512')
      // made again, the plan applies on both
      expect((await runIn(root, ['diff', '--out', 'both.plan.json'])).code).toBe(0)
      const whole = await runIn(root, ['apply', '--plan', 'both.plan.json', '--yes'])
      expect(whole.code, whole.stderr).toBe(0)
      expect([lab.sim.control.guest(180)?.config.memory, b.control.guest(181)?.config.memory]).toEqual(['768', '768'])
    } finally {
      await b.close()
    }
  })
})

describe('5. a slow template conversion is waited for', () => {
  it('a TemplateCT with 6 s tasks and its clone converge in one apply', async () => {
    const tct = `apiVersion: proxops/v1alpha1
kind: TemplateCT
metadata:
  name: ct-tpl
spec:
  node: pve1
  vmid: 190
  template: deb
  memory: 512MiB
  cpu: { cores: 1 }
  root: { storage: local-lvm, size: 4GiB }
`
    const clone = `apiVersion: proxops/v1alpha1
kind: LXC
metadata:
  name: ct-clone
spec:
  node: pve1
  vmid: 191
  clone: ct-tpl
  state: stopped
  memory: 512MiB
  cpu: { cores: 1 }
  root: { storage: local-lvm, size: 4GiB }
`
    const root = await lab.repo({
      cluster: 'tpl',
      manifests: { 'ctt/tpl/deb.yaml': CTT_DEB, 'templatect/tpl/ct-tpl.yaml': tct, 'lxc/tpl/ct-clone.yaml': clone },
    })
    lab.sim.control.setTaskDuration(6_000)
    let apply
    try {
      apply = await runIn(root, ['apply', '--yes'])
    } finally {
      lab.sim.control.setTaskDuration(50)
    }
    expect(apply.code, apply.stdout + apply.stderr).toBe(0)
    expect(apply.stdout).toMatch(/ok {6}TemplateCT\/pve1\/190\(ct-tpl\) (create|mark-template)/)
    expect(apply.stdout).toMatch(/ok {6}LXC\/pve1\/191\(ct-clone\) clone/)
    expect(apply.stdout).not.toContain('not confirmed by read-back')
    expect(lab.sim.control.guest(190)?.config.template).toBe('1')
    expect((await runIn(root, ['diff', '--detailed-exitcode'])).code).toBe(0)
  })
})

describe('7. habits from Terraform and kubectl, as documented', () => {
  let root: string
  beforeAll(async () => {
    root = await lab.repo({
      cluster: 'habit',
      manifests: {
        'vm/habit/web.yaml': vmManifest('web', 195, { cloudInit: true }),
        'vm/habit/db.yaml': vmManifest('db', 196),
        // a template of its own: nothing else in this file downloads it
        'ctt/habit/deb13.yaml': CTT_DEB.replace('name: deb', 'name: deb13').replace(
          /debian-12-standard_12\.7-1/g,
          'debian-13-standard_13.1-1',
        ),
        'lxc/habit/cache.yaml': `apiVersion: proxops/v1alpha1
kind: LXC
metadata:
  name: cache
spec:
  node: pve1
  vmid: 197
  template: deb13
  state: stopped
  memory: 512MiB
  cpu: { cores: 1 }
  root: { storage: local-lvm, size: 4GiB }
`,
      },
    })
  })

  it('plan is diff; -o yaml is the json document as YAML (diff, validate)', async () => {
    const [plan, diff] = await Promise.all([runIn(root, ['plan']), runIn(root, ['diff'])])
    expect(plan.code).toBe(0)
    expect(plan.stdout).toBe(diff.stdout)
    const [json, yaml] = await Promise.all([runIn(root, ['diff', '-o', 'json']), runIn(root, ['diff', '-o', 'yaml'])])
    expect(parseYaml(yaml.stdout)).toEqual(JSON.parse(json.stdout))
    const [vj, vy] = await Promise.all([
      runIn(root, ['validate', '-o', 'json']),
      runIn(root, ['validate', '-o', 'yaml']),
    ])
    expect(parseYaml(vy.stdout)).toEqual(JSON.parse(vj.stdout))
  })

  it('--target narrows diff and apply to an object and what it depends on; show renders the saved plan', async () => {
    const diff = await runIn(root, ['diff', '--target', 'lxc/cache', '--out', 'cache.plan.json'])
    expect(diff.code, diff.stderr).toBe(0)
    expect(diff.stdout).toMatch(/\+ CTTemplate\/pve1\/local\/debian-13-standard/)
    expect(diff.stdout).toMatch(/\+ LXC\/pve1\/197\(cache\)/)
    expect(diff.stdout).not.toMatch(/VM\/pve1\/19[56]/)
    expect(diff.stdout).toMatch(/Plan: 2 to create, 0 to update, 0 to delete\./)
    const saved = JSON.parse(readFileSync(path.join(root, 'cache.plan.json'), 'utf8')) as { targets: string[] }
    expect(saved.targets).toEqual(['LXC/cache'])

    const show = await runIn(root, ['show', 'cache.plan.json'])
    expect(show.code).toBe(0)
    expect(show.stdout).toMatch(/^Saved plan cache\.plan\.json: commit [0-9a-f]{12}\S*, cluster habit$/m)
    expect(show.stdout).toContain('Narrowed to --target LXC/cache')
    expect(show.stdout).toContain(diff.stdout.slice(diff.stdout.indexOf('ProxOps will perform')))
    const showYaml = await runIn(root, ['show', 'cache.plan.json', '-o', 'yaml'])
    expect(parseYaml(showYaml.stdout)).toEqual(JSON.parse(readFileSync(path.join(root, 'cache.plan.json'), 'utf8')))

    // a saved targeted plan is applied as saved; --target with another object is refused
    const other = await runIn(root, ['apply', '--plan', 'cache.plan.json', '--target', 'VM/web', '--yes'])
    expect(errorLines(other.stderr)).toEqual([
      'proxops: error: cache.plan.json was saved with --target LXC/cache: apply it without --target, as it was saved',
    ])
    const apply = await runIn(root, ['apply', '--plan', 'cache.plan.json', '--yes', '-o', 'yaml'])
    expect(apply.code, apply.stderr).toBe(0)
    const doc = parseYaml(apply.stdout) as { reports: { results: { address: string; status: string }[] }[] }
    expect(doc.reports[0]!.results.map((r) => `${r.address} ${r.status}`)).toEqual([
      expect.stringMatching(/^CTTemplate\/pve1\/local\/\S+ ok$/),
      'LXC/pve1/197(cache) ok',
    ])
    expect(lab.sim.control.guest(195)).toBeUndefined()

    const web = await runIn(root, ['apply', '--target', 'VM/web', '--yes'])
    expect(web.code, web.stderr).toBe(0)
    expect(web.stdout).toMatch(/Apply complete for cluster habit: 1 ok, 0 failed, 0 skipped\./)
    expect(lab.sim.control.guest(196)).toBeUndefined()
    const unknown = await runIn(root, ['diff', '--target', 'VM/webb'])
    expect(unknown.code).toBe(1)
    expect(errorLines(unknown.stderr)).toEqual([
      'proxops: error: --target VM/webb: no VM named "webb" in cluster habit; did you mean VM/web?',
    ])
  })

  it('status KIND/name: one object and its exit code (0 converged, 2 not, 1 error)', async () => {
    const web = await runIn(root, ['status', 'VM/web'])
    expect(web.code, web.stderr).toBe(0)
    expect(web.stdout).toMatch(/^VM\/web in cluster habit: converged\n {2}node pve1, vmid 195\n/)
    const db = await runIn(root, ['status', 'vm/db'])
    expect(db.code).toBe(2)
    expect(db.stdout).toMatch(/^VM\/db in cluster habit: drift\n {2}node pve1, vmid 196\n(.*\n)* {2}create: /)
    const [json, yaml] = await Promise.all([
      runIn(root, ['status', 'VM/db', '-o', 'json']),
      runIn(root, ['status', 'VM/db', '-o', 'yaml']),
    ])
    expect(json.code).toBe(2)
    expect(parseYaml(yaml.stdout)).toEqual(JSON.parse(json.stdout))
    expect((JSON.parse(json.stdout) as { objects: { name: string; state: string }[] }).objects).toEqual([
      expect.objectContaining({ cluster: 'habit', kind: 'VM', name: 'db', state: 'drift' }),
    ])
    const none = await runIn(root, ['status', 'VM/nope'])
    expect(none.code).toBe(1)
    expect(errorLines(none.stderr)).toEqual(['proxops: error: status VM/nope: no VM named "nope" in cluster habit'])
    // the whole table still works, as YAML too
    const [tj, ty] = await Promise.all([runIn(root, ['status', '-o', 'json']), runIn(root, ['status', '-o', 'yaml'])])
    // two runs: the same document but for the times they ran at
    const untimed = (doc: { cycles: Record<string, unknown>[] }) =>
      doc.cycles.map(({ startedAt: _s, finishedAt: _f, ...rest }) => rest)
    expect(untimed(parseYaml(ty.stdout) as { cycles: Record<string, unknown>[] })).toEqual(
      untimed(JSON.parse(tj.stdout) as { cycles: Record<string, unknown>[] }),
    )
  })
})

describe('no secret in any output', () => {
  it('holds for every command above', () => {
    expect(transcriptCanaries()).toEqual([])
  })
})
