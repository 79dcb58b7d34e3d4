import { afterEach, describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { loadRepository, type RepositoryModel } from './load.js'
import { discoverRepository } from './discover.js'
import { nodeFs, type RepoFs } from './fs.js'
import { clusterConfig, isoYaml, tempRepo, vmYaml, type TempRepo } from '../test-support/repo.js'

let repo: TempRepo | undefined
afterEach(() => {
  repo?.cleanup()
  repo = undefined
})

const codes = (m: RepositoryModel): string[] =>
  m.errors.map((e) => (e.line ? `${e.file}:${e.line}:${e.column} ${e.code}` : `${e.file} ${e.code}`))

function lab(resources: string[], files: Record<string, string> = {}): TempRepo {
  repo = tempRepo({
    'clusters/lab/config.yaml': clusterConfig('lab'),
    'clusters/lab/resources.yaml': `resources:\n${resources.map((r) => `  - ${r}\n`).join('')}`,
    ...files,
  })
  return repo
}

describe('discovery', () => {
  it('finds the nearest .git directory or file upward', async () => {
    repo = tempRepo({
      'a/b/c/.keep': '',
      '.git/HEAD': 'ref: refs/heads/main\n',
      'a/sub/.git': 'gitdir: ../../.git/modules/sub\n',
      'a/sub/x/.keep': '',
    })
    expect(await discoverRepository(join(repo.root, 'a/b/c'))).toEqual({ ok: true, root: repo.root })
    expect(await discoverRepository(join(repo.root, 'a/sub/x'))).toEqual({ ok: true, root: join(repo.root, 'a/sub') })
    expect(await discoverRepository(repo.root)).toEqual({ ok: true, root: repo.root })
  })

  it('fails with "no ProxOps GitOps repository found" when there is none', async () => {
    const fs: RepoFs = { ...nodeFs, lstat: async () => undefined }
    repo = tempRepo({ 'x/.keep': '' })
    const r = await discoverRepository(join(repo.root, 'x'), fs)
    expect(r.ok).toBe(false)
    expect(r.ok ? '' : r.message).toContain('no ProxOps GitOps repository found')
    const missing = await discoverRepository(join(repo.root, 'nope'))
    expect(missing.ok ? '' : missing.message).toContain('no ProxOps GitOps repository found')
  })
})

describe('loadRepository', () => {
  it('rejects a root that is not a directory', async () => {
    repo = tempRepo()
    expect(codes(await loadRepository({ root: join(repo.root, 'missing') }))).toEqual(['. root-invalid'])
  })

  it('accepts an empty composition, a bare list and blank entries; parses files in lexicographic order', async () => {
    lab([], {
      'clusters/lab/resources.yaml': '- ../../vm/b/z.yaml\n- ""\n-\n- ../../vm/a/y.yml\n',
      'vm/b/z.yaml': vmYaml('z', 101),
      'vm/a/y.yml': vmYaml('y', 102),
    })
    const m = await loadRepository({ root: repo!.root })
    expect(m.errors).toEqual([])
    expect(m.clusters[0]!.files).toEqual(['vm/a/y.yml', 'vm/b/z.yaml'])
    expect(m.clusters[0]!.index.resources.map((r) => r.key)).toEqual(['VM/y', 'VM/z'])
    repo!.write('clusters/lab/resources.yaml', 'resources: []\n')
    const empty = await loadRepository({ root: repo!.root })
    expect(empty.errors).toEqual([])
    expect(empty.clusters[0]!.index.resources).toEqual([])
    repo!.write('clusters/lab/resources.yaml', '')
    expect((await loadRepository({ root: repo!.root })).errors).toEqual([])
  })

  it('resolves secrets-file against the declaring file; exposes the cluster entry', async () => {
    lab([], {
      'clusters/lab/config.yaml': `${clusterConfig('lab')}      secrets-file: secrets.sops.yaml\n      secrets:\n        pve: {user: u, token-id: t, token: s}\n`,
    })
    const [c] = (await loadRepository({ root: repo!.root })).clusters
    expect(c!.secretsFile).toBe(join(repo!.root, 'clusters/lab/secrets.sops.yaml'))
    expect(c!.entry).toMatchObject({
      'base-url': 'https://lab.example.invalid:8006',
      nodes: ['pve1', 'pve2'],
      secrets: { pve: { user: 'u' } },
    })
    expect(c!.ok).toBe(true)
  })

  it('reads proxops.yaml with defaults and inline clusters', async () => {
    lab([], {
      'proxops.yaml':
        'log: {level: debug}\nreconcile: {prune-budget: unlimited, poll-interval: 1m30s}\npve:\n  clusters:\n    edge:\n      base-url: https://edge.example.invalid\n',
      'clusters/edge/resources.yaml': 'resources: []\n',
    })
    const m = await loadRepository({ root: repo!.root })
    expect(m.errors).toEqual([])
    expect(m.processConfigFile).toBe('proxops.yaml')
    expect(m.processConfig.log.level).toBe('debug')
    expect(m.processConfig.reconcile).toMatchObject({
      'prune-budget': 'unlimited',
      'poll-interval': 90_000,
      'task-timeout': 1_800_000,
    })
    expect(m.processConfig.git.branch).toBe('main')
    expect(m.clusters.map((c) => [c.name, c.configFile])).toEqual([
      ['edge', 'proxops.yaml'],
      ['lab', 'clusters/lab/config.yaml'],
    ])
  })

  it('rejects a cluster declared twice and mutually exclusive git settings', async () => {
    lab([], {
      'proxops.yaml': `git: {url: https://g.example.invalid/r.git, path: .}\n${clusterConfig('lab', ['pve1'], 'https://other.example.invalid')}`,
    })
    expect(codes(await loadRepository({ root: repo!.root }))).toEqual([
      'clusters/lab/config.yaml:3:5 config-invalid',
      'proxops.yaml:1:45 config-invalid',
    ])
  })

  it('keeps legacy process settings of a cluster-local file', async () => {
    lab([], { 'clusters/lab/config.yaml': `log: {level: warn}\ngit: {path: .}\n${clusterConfig('lab')}` })
    const [c] = (await loadRepository({ root: repo!.root })).clusters
    expect(c!.localSettings?.log.level).toBe('warn')
  })

  it('enforces the per-file size limit', async () => {
    lab(['../../vm/base/a.yaml'], { 'vm/base/a.yaml': vmYaml('a', 100) + `# ${'x'.repeat(2000)}\n` })
    expect(codes(await loadRepository({ root: repo!.root, limits: { maxFileBytes: 1000 } }))).toEqual([
      'vm/base/a.yaml file-too-large',
    ])
  })

  it('reports a file that cannot be read', async () => {
    lab(['../../vm/base/a.yaml'], { 'vm/base/a.yaml': vmYaml('a', 100) })
    const fs: RepoFs = {
      ...nodeFs,
      readFile: async (p) => (p.endsWith('a.yaml') ? Promise.reject(new Error('EIO: i/o error')) : nodeFs.readFile(p)),
    }
    const m = await loadRepository({ root: repo!.root, fs })
    expect(codes(m)).toEqual(['vm/base/a.yaml file-unreadable'])
    expect(m.errors[0]!.message).toContain('EIO')
  })

  it('selects one cluster with options.cluster and reports an unknown one', async () => {
    lab(['../../vm/base/a.yaml'], {
      'vm/base/a.yaml': vmYaml('a', 100),
      'clusters/two/config.yaml': clusterConfig('two'),
      'clusters/two/resources.yaml': '- ../../vm/base/broken.yaml\n',
      'vm/base/broken.yaml': 'kind: VM\n',
    })
    const one = await loadRepository({ root: repo!.root, cluster: 'lab' })
    expect(one.clusters.map((c) => c.name)).toEqual(['lab'])
    expect(one.errors).toEqual([])
    const all = await loadRepository({ root: repo!.root })
    expect(all.clusters.find((c) => c.name === 'lab')!.ok).toBe(true)
    expect(all.clusters.find((c) => c.name === 'two')!.ok).toBe(false)
    expect(codes(await loadRepository({ root: repo!.root, cluster: 'ghost' }))).toEqual(['. cluster-unknown'])
  })

  it('a legacy file breaks every cluster', async () => {
    lab(['../../vm/base/a.yaml'], { 'vm/base/a.yaml': vmYaml('a', 100), 'iso/old.yml': isoYaml('old') })
    const m = await loadRepository({ root: repo!.root })
    expect(codes(m)).toEqual(['iso/old.yml legacy-layout'])
    expect(m.clusters[0]!.ok).toBe(false)
  })

  it("clusters never see each other's resources, and shared base objects are not shared in memory", async () => {
    repo = tempRepo({
      'clusters/a/config.yaml': clusterConfig('a', ['pve1']),
      'clusters/a/resources.yaml': '- ../../iso/base/i.yaml\n- ../../vm/a/v.yaml\n',
      'clusters/b/config.yaml': clusterConfig('b', ['edge1']),
      'clusters/b/resources.yaml': '- ../../iso/base/i.yaml\n',
      'iso/base/i.yaml': isoYaml('i', ['pve1', 'edge1']),
      'vm/a/v.yaml': vmYaml('v', 100, 'pve1', '  hardware: {cdrom: {iso: i}}\n'),
    })
    const m = await loadRepository({ root: repo.root })
    expect(m.errors).toEqual([])
    const [a, b] = m.clusters
    expect(a!.index.get('VM', 'v')).toBeDefined()
    expect(b!.index.get('VM', 'v')).toBeUndefined()
    const ia = a!.index.get('ISO', 'i')!
    const ib = b!.index.get('ISO', 'i')!
    expect(ia.manifest).not.toBe(ib.manifest)
    // each cluster keeps only its own nodes of a shared artifact
    expect(ia.manifest.spec.nodes).toEqual(['pve1'])
    expect(ib.manifest.spec.nodes).toEqual(['edge1'])
    expect(a!.graph.dependsOn.get('VM/v')).toEqual(['ISO/i'])
    expect(a!.graph.level.get('VM/v')).toBe(1)
    expect(a!.index.guest('pve1', 100)?.key).toBe('VM/v')
    expect(a!.index.byKey('ISO/i')).toBe(ia)
    expect(a!.index.ofKind('ISO').map((r) => r.key)).toEqual(['ISO/i'])
  })

  it('an artifact with no node of the cluster is an error', async () => {
    repo = tempRepo({
      'clusters/a/config.yaml': clusterConfig('a', ['pve1']),
      'clusters/a/resources.yaml': '- ../../iso/base/i.yaml\n',
      'clusters/b/config.yaml': clusterConfig('b', ['edge1']),
      'clusters/b/resources.yaml': '[]\n',
      'iso/base/i.yaml': isoYaml('i', ['edge1']),
    })
    expect(codes(await loadRepository({ root: repo.root }))).toEqual(['iso/base/i.yaml:6:3 node-not-allowed'])
  })

  it('duplicate-vmid: one vmid on two different nodes of a cluster is rejected (PVE vmids are cluster-wide)', async () => {
    lab(['../../vm/base/a.yaml', '../../vm/base/b.yaml'], {
      'clusters/lab/config.yaml': 'pve:\n  clusters:\n    lab:\n      base-url: https://lab.example.invalid\n',
      'vm/base/a.yaml': vmYaml('a', 100, 'pve1'),
      'vm/base/b.yaml': vmYaml('b', 100, 'pve2'),
    })
    const m = await loadRepository({ root: repo!.root })
    expect(m.errors.map((e) => `${e.file}:${e.line} ${e.code}`)).toEqual(['vm/base/b.yaml:7 duplicate-vmid'])
    expect(m.errors[0]?.message).toContain('node "pve1"')
  })

  it('an empty allowlist checks nothing', async () => {
    lab(['../../vm/base/a.yaml'], {
      'clusters/lab/config.yaml': 'pve:\n  clusters:\n    lab:\n      base-url: https://lab.example.invalid\n',
      'vm/base/a.yaml': vmYaml('a', 100, 'anywhere'),
    })
    expect((await loadRepository({ root: repo!.root })).errors).toEqual([])
  })

  it('dependency errors: wrong kind, self clone, clone with the same vmid; a clone source on another node is no error (the plan decides, at create)', async () => {
    lab(['../../vm/base/a.yaml', '../../vm/base/b.yaml', '../../templatevm/base/t.yaml'], {
      'vm/base/a.yaml': vmYaml('a', 100, 'pve1', '  hardware: {cdrom: {iso: b}}\n'),
      'vm/base/b.yaml':
        vmYaml('b', 101, 'pve1').replace('  disks: [{storage: local-lvm, size: 8GiB}]\n', '  clone: b\n') +
        '---\n' +
        vmYaml('c', 102, 'pve2').replace('  disks: [{storage: local-lvm, size: 8GiB}]\n', '  clone: t\n') +
        '---\n' +
        vmYaml('d', 900, 'pve1')
          .replace('  disks: [{storage: local-lvm, size: 8GiB}]\n', '  clone: t\n')
          .replace('vmid: 900', 'vmid: 900'),
      'templatevm/base/t.yaml': vmYaml('t', 900, 'pve1').replace('kind: VM', 'kind: TemplateVM'),
    })
    const m = await loadRepository({ root: repo!.root })
    expect(m.errors.map((e) => `${e.file}:${e.line} ${e.code}`)).toEqual([
      'vm/base/a.yaml:11 dependency-kind',
      'vm/base/b.yaml:10 clone-invalid',
      'vm/base/b.yaml:29 duplicate-vmid',
      'vm/base/b.yaml:32 clone-invalid',
    ])
  })

  it('an unknown reference gets the nearest declared name of its kind, if one is close (did you mean)', async () => {
    const cloneOf = (name: string, vmid: number, source: string) =>
      vmYaml(name, vmid, 'pve1').replace('  disks: [{storage: local-lvm, size: 8GiB}]\n', `  clone: ${source}\n`)
    lab(['../../vm/base/a.yaml', '../../templatevm/base/t.yaml'], {
      'vm/base/a.yaml': `${cloneOf('a', 100, 'base-tmpl')}---\n${cloneOf('b', 101, 'something-else')}`,
      'templatevm/base/t.yaml': vmYaml('base-tmpl8', 900, 'pve1').replace('kind: VM', 'kind: TemplateVM'),
    })
    const m = await loadRepository({ root: repo!.root })
    expect(m.errors.map((e) => `${e.file}:${e.line} ${e.code} ${e.message}`)).toEqual([
      'vm/base/a.yaml:10 dependency-unknown TemplateVM "base-tmpl" is not in cluster lab\'s composition: did you mean "base-tmpl8"? If not, list its file in clusters/lab/resources.yaml (resources of other clusters are not visible)',
      'vm/base/a.yaml:21 dependency-unknown TemplateVM "something-else" is not in cluster lab\'s composition: list its file in clusters/lab/resources.yaml (resources of other clusters are not visible)',
    ])
  })

  it('LXC clones: the TemplateCT must be clonable (no bind mounts) and no larger; its node is no error', async () => {
    const ct = (kind: string, name: string, vmid: number, node: string, body: string): string =>
      `apiVersion: proxops/v1alpha1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n  node: ${node}\n  vmid: ${vmid}\n  memory: 512MiB\n  cpu: {cores: 1}\n${body}`
    const root = (size: string) => `  root: {storage: local-lvm, size: ${size}}\n`
    lab(['../../lxc/base/c.yaml', '../../templatect/base/t.yaml', '../../ctt/base/deb.yaml'], {
      'ctt/base/deb.yaml':
        'apiVersion: proxops/v1alpha1\nkind: CTTemplate\nmetadata:\n  name: deb\nspec:\n  nodes: [pve1]\n  storage: local\n  filename: deb.tar.zst\n  url: https://downloads.example.invalid/deb.tar.zst\n',
      'templatect/base/t.yaml':
        ct('TemplateCT', 't', 900, 'pve1', `  template: deb\n${root('8GiB')}`) +
        '---\n' +
        ct(
          'TemplateCT',
          'tb',
          901,
          'pve1',
          `  template: deb\n${root('4GiB')}  bind-mounts: [{host-path: /srv/x, mount-point: /x}]\n`,
        ),
      'lxc/base/c.yaml':
        ct('LXC', 'ok', 100, 'pve1', `  clone: t\n${root('16GiB')}`) +
        '---\n' +
        ct('LXC', 'small', 101, 'pve1', `  clone: t\n${root('4GiB')}`) +
        '---\n' +
        ct('LXC', 'elsewhere', 102, 'pve2', `  clone: t\n${root('8GiB')}`) +
        '---\n' +
        ct('LXC', 'binds', 103, 'pve1', `  clone: tb\n${root('8GiB')}`) +
        '---\n' +
        ct('LXC', 'vmtpl', 104, 'pve1', `  clone: deb\n${root('8GiB')}`),
    })
    const m = await loadRepository({ root: repo!.root })
    expect(m.errors.map((e) => `${e.file}:${e.line} ${e.code} ${e.message}`)).toEqual([
      `lxc/base/c.yaml:23 clone-invalid spec.root.size is smaller than TemplateCT "t"'s root (8589934592 bytes); a clone's root filesystem can only grow`,
      'lxc/base/c.yaml:46 clone-invalid TemplateCT "tb" has bind mounts, which PVE cannot clone ("unable to clone mountpoint")',
      'lxc/base/c.yaml:58 dependency-kind clone must name a TemplateCT, but "deb" is a CTTemplate',
    ])
    const [c] = m.clusters
    expect(c?.graph.dependsOn.get('LXC/ok')).toEqual(['TemplateCT/t'])
  })

  it('reports a self-dependency as a cycle', async () => {
    lab(['../../iso/base/i.yaml'], {
      'iso/base/i.yaml': isoYaml('i').replace(
        '  name: i\n',
        '  name: i\n  annotations: {proxops/depends-on: "ISO:i"}\n',
      ),
    })
    const m = await loadRepository({ root: repo!.root })
    expect(m.errors.map((e) => [e.code, e.message])).toEqual([
      ['dependency-cycle', 'dependency cycle: ISO/i → ISO/i; remove one of these dependencies'],
    ])
  })

  it('errors of a shared file are reported once, naming every cluster', async () => {
    repo = tempRepo({
      'clusters/a/config.yaml': clusterConfig('a'),
      'clusters/a/resources.yaml': '- ../../vm/base/x.yaml\n',
      'clusters/b/config.yaml': clusterConfig('b'),
      'clusters/b/resources.yaml': '- ../../vm/base/x.yaml\n',
      'vm/base/x.yaml': vmYaml('x', 100).replace('memory: 1GiB', 'memory: 1G'),
    })
    const m = await loadRepository({ root: repo.root })
    expect(m.errors).toHaveLength(1)
    expect(m.errors[0]).toMatchObject({
      code: 'quantity-not-whole-mib',
      file: 'vm/base/x.yaml',
      line: 8,
      column: 11,
      clusters: ['a', 'b'],
      field: 'spec.memory',
    })
  })
})

describe('symlinks and the root boundary', () => {
  it('refuses a composition entry whose symlink leads outside the root', async () => {
    lab(['../../vm/base/a.yaml', '../../vm/base/link.yaml'], { 'vm/base/a.yaml': vmYaml('a', 100) })
    repo!.write('../secret.yaml', vmYaml('s', 101))
    repo!.link('vm/base/link.yaml', join(repo!.dir, 'secret.yaml'))
    const m = await loadRepository({ root: repo!.root })
    expect(codes(m)).toEqual(['clusters/lab/resources.yaml:3:5 composition-path-escape'])
    expect(m.errors[0]!.message).toContain('outside the repository root')
  })

  it('refuses a path through a symlinked directory leading outside', async () => {
    lab(['../../vm/ext/x.yaml'])
    repo!.write('../elsewhere/x.yaml', vmYaml('x', 100))
    repo!.link('vm/ext', join(repo!.dir, 'elsewhere'))
    expect(codes(await loadRepository({ root: repo!.root }))).toEqual([
      'clusters/lab/resources.yaml:2:5 composition-path-escape',
    ])
  })

  it('follows a symlink that stays inside, applying the rules to the real file', async () => {
    lab(['../../vm/base/alias.yaml', '../../vm/base/a.yaml'], { 'vm/base/a.yaml': vmYaml('a', 100) })
    repo!.link('vm/base/alias.yaml', 'a.yaml')
    expect(codes(await loadRepository({ root: repo!.root }))).toEqual([
      'clusters/lab/resources.yaml:3:5 composition-duplicate',
    ])
  })

  it('refuses a symlinked config or composition leading outside', async () => {
    lab([])
    repo!.write('../outside.yaml', clusterConfig('lab'))
    repo!.mkdir('clusters/ext')
    repo!.link('clusters/ext/config.yaml', join(repo!.dir, 'outside.yaml'))
    repo!.link('clusters/ext/resources.yaml', join(repo!.dir, 'outside.yaml'))
    expect(codes(await loadRepository({ root: repo!.root }))).toEqual([
      'clusters/ext/config.yaml path-outside-root',
      'clusters/ext/resources.yaml path-outside-root',
    ])
  })

  it('refuses absolute composition paths', async () => {
    lab(['/etc/passwd'])
    expect(codes(await loadRepository({ root: repo!.root }))).toEqual([
      'clusters/lab/resources.yaml:2:5 composition-invalid',
    ])
  })
})

describe('composition entries that are not readable manifests', () => {
  it('reports missing paths, dangling links, directories and FIFOs without opening them', async () => {
    const entries = [
      '../../vm/base/gone.yaml',
      '../../vm/base/dangling.yaml',
      '../../vm/base/dir.yaml',
      '../../vm/base/fifo.yaml',
      '../../vm/base/a.yaml',
    ]
    lab(entries, { 'vm/base/a.yaml': vmYaml('a', 100) })
    repo!.link('vm/base/dangling.yaml', 'nowhere.yaml')
    repo!.mkdir('vm/base/dir.yaml')
    execFileSync('mkfifo', [join(repo!.root, 'vm/base/fifo.yaml')])
    const m = await loadRepository({ root: repo!.root })
    expect(codes(m)).toEqual([
      'clusters/lab/resources.yaml:2:5 composition-path-missing',
      'clusters/lab/resources.yaml:3:5 composition-path-missing',
      'clusters/lab/resources.yaml:4:5 composition-not-file',
      'clusters/lab/resources.yaml:5:5 composition-not-file',
    ])
    expect(m.clusters[0]!.files).toEqual(['vm/base/a.yaml'])
  })

  it('a file-system failure other than "nothing there" is not taken for a missing file', async () => {
    lab(['../../vm/base/a.yaml'], { 'vm/base/a.yaml': vmYaml('a', 100) })
    const denied = (): Promise<never> =>
      Promise.reject(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }))
    const fs: RepoFs = {
      ...nodeFs,
      realpath: (p) => (p.endsWith('a.yaml') ? denied() : nodeFs.realpath(p)),
      lstat: (p) => (p.endsWith('a.yaml') ? denied() : nodeFs.lstat(p)),
    }
    await expect(loadRepository({ root: repo!.root, fs })).rejects.toThrow('EACCES')
  })

  it('costs one realpath, one stat and one read per listed manifest, whatever the number of files', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `vm${i}`)
    lab(
      names.map((n) => `../../vm/base/${n}.yaml`),
      Object.fromEntries(names.map((n, i) => [`vm/base/${n}.yaml`, vmYaml(n, 100 + i)])),
    )
    const calls: string[] = []
    const fs = Object.fromEntries(
      Object.entries(nodeFs).map(([op, fn]) => [
        op,
        (p: string) => (p.includes(`${join('vm', 'base')}`) && calls.push(op), (fn as (p: string) => unknown)(p)),
      ]),
    ) as unknown as RepoFs
    const m = await loadRepository({ root: repo!.root, fs })
    expect(m.errors).toEqual([])
    expect(m.clusters[0]!.index.resources).toHaveLength(30)
    const count = (op: string): number => calls.filter((c) => c === op).length
    expect({
      realpath: count('realpath'),
      stat: count('stat'),
      lstat: count('lstat'),
      readFile: count('readFile'),
    }).toEqual({ realpath: 30, stat: 30, lstat: 0, readFile: 30 })
  })
})

describe('one configuration reader (validate and every command agree)', () => {
  it('accepts what the CLI accepts: poll-interval 1.5s, disruption allow, a base-url ending in /api2/json (normalised)', async () => {
    lab([], {
      'proxops.yaml': 'reconcile: {poll-interval: 1.5s, disruption: allow}\n',
      'clusters/lab/config.yaml':
        'pve:\n  clusters:\n    lab:\n      base-url: https://lab.example.invalid:8006/api2/json/\n      nodes: [pve1]\n      disruption: allow\n',
    })
    const m = await loadRepository({ root: repo!.root })
    expect(m.errors).toEqual([])
    expect(m.processConfig.reconcile['poll-interval']).toBe(1500)
    expect(m.clusters[0]!.entry['base-url']).toBe('https://lab.example.invalid:8006')
  })

  it('safety-snapshots: keep defaults to 3, must be 1 to 20, and the error names file, line and field', async () => {
    const entry = (extra: string) =>
      `pve:\n  clusters:\n    lab:\n      base-url: https://lab.example.invalid:8006\n      nodes: [pve1]\n${extra}`
    lab([], { 'clusters/lab/config.yaml': entry('      safety-snapshots: {}\n') })
    const m = await loadRepository({ root: repo!.root })
    expect(m.errors).toEqual([])
    expect(m.clusters[0]!.entry['safety-snapshots']).toEqual({ keep: 3 })
    lab([], { 'clusters/lab/config.yaml': entry('      safety-snapshots: {keep: 0}\n') })
    const bad = await loadRepository({ root: repo!.root })
    expect(bad.errors.map((e) => `${e.file}:${e.line} ${e.message}`)).toEqual([
      expect.stringMatching(/^clusters\/lab\/config\.yaml:6 .*safety-snapshots\.keep: must be between 1 and 20/),
    ])
  })

  it('rejects offline what a command would reject: a malformed token-value (not echoed), a git.url that is no URL, credentials in a cluster-local file, conflicting legacy settings', async () => {
    lab([], {
      'proxops.yaml': 'pve:\n  token-value: "root@pam!x:CANARY-9f3e"\ngit:\n  url: "not a url"\n',
      'clusters/lab/config.yaml': `listen: 127.0.0.1:1\npve:\n  token: CANARY-7a1b\n${clusterConfig('lab').replace(/^pve:\n/, '')}`,
      'clusters/b/config.yaml': `listen: 127.0.0.1:2\n${clusterConfig('b', ['pve2'], 'https://b.example.invalid')}`,
      'clusters/b/resources.yaml': 'resources: []\n',
    })
    const m = await loadRepository({ root: repo!.root })
    const text = m.errors.map((e) => `${e.file}:${e.line} ${e.message}`)
    expect(text).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^proxops\.yaml:2 pve\.token-value: must look like user@realm!tokenid=secret/),
        expect.stringMatching(/^proxops\.yaml:4 git\.url: must be an https:\/\//),
        expect.stringMatching(/^clusters\/lab\/config\.yaml:3 pve\.token is not allowed in a cluster-local config/),
        expect.stringMatching(/^clusters\/lab\/config\.yaml:1 listen conflicts with clusters\/b\/config\.yaml/),
      ]),
    )
    expect(text.join('\n')).not.toMatch(/CANARY/)
  })
})

describe("readConfigFile and readRepositoryFile (the loader's rules for every file)", () => {
  it('refuses a FIFO, a symlink to /dev/zero or out of the root, and an oversized file, without reading them', async () => {
    const { readConfigFile, readRepositoryFile } = await import('./load.js')
    const { symlinkSync } = await import('node:fs')
    lab([], { 'big.yaml': `# ${'x'.repeat(3000)}\n`, 'ok.yaml': 'log: {level: warn}\n' })
    const root = repo!.root
    execFileSync('mkfifo', [join(root, 'fifo.yaml')])
    symlinkSync('/dev/zero', join(root, 'zero.yaml'))
    symlinkSync('/etc/hostname', join(root, 'out.yaml'))
    const code = async (f: string, o = {}) =>
      (await readConfigFile(join(root, f), { root, ...o })).errors.map((e) => `${e.file} ${e.code}`)
    expect(await code('fifo.yaml')).toEqual(['fifo.yaml file-unreadable'])
    expect(await code('zero.yaml')).toEqual(['zero.yaml path-outside-root'])
    expect(await code('out.yaml')).toEqual(['out.yaml path-outside-root'])
    expect(await code('big.yaml', { limits: { maxFileBytes: 1000 } })).toEqual(['big.yaml file-too-large'])
    // without a root (an operator's --config): still a regular file only
    expect((await readConfigFile(join(root, 'zero.yaml'))).errors.map((e) => e.code)).toEqual(['file-unreadable'])
    expect((await readConfigFile(join(root, 'ok.yaml'), { root })).layer?.config.log.level).toBe('warn')
    expect((await readConfigFile(join(root, 'missing.yaml'), { root })).missing).toBe(true)
    expect(await readRepositoryFile(join(root, 'fifo.yaml'), { root })).toMatchObject({
      error: { code: 'file-unreadable' },
    })
    expect(await readRepositoryFile(join(root, 'out.yaml'), { root })).toMatchObject({
      error: { code: 'path-outside-root' },
    })
    expect(await readRepositoryFile(join(root, 'ok.yaml'), { root })).toEqual({ text: 'log: {level: warn}\n' })
  })
})

describe('names and bytes PVE cannot take are rejected offline', () => {
  it('a node named "..", a NUL byte, an escaped NUL and invalid UTF-8 in manifests: coded errors, nothing loaded', async () => {
    const { writeFileSync } = await import('node:fs')
    lab(['../../vm/base/dots.yaml', '../../vm/base/nul.yaml', '../../vm/base/esc.yaml', '../../vm/base/latin1.yaml'], {
      'vm/base/dots.yaml': vmYaml('dots', 100, '..'),
      'vm/base/nul.yaml': vmYaml('nul', 101).replace('name: nul', 'name: nul\0'),
      'vm/base/esc.yaml': `${vmYaml('esc', 102)}  description: "a\\0b"\n`,
    })
    writeFileSync(
      join(repo!.root, 'vm/base/latin1.yaml'),
      Buffer.concat([
        Buffer.from(vmYaml('latin', 103)),
        Buffer.from('  description: caf'),
        Buffer.from([0xe9]),
        Buffer.from('\n'),
      ]),
    )
    const m = await loadRepository({ root: repo!.root })
    expect(m.clusters[0]!.index.resources).toEqual([])
    const byFile = Object.fromEntries(m.errors.map((e) => [e.file, `${e.code} ${e.message}`]))
    expect(byFile['vm/base/dots.yaml']).toMatch(/^node-name-invalid spec\.node: node name "\.\." is invalid/)
    expect(byFile['vm/base/nul.yaml']).toMatch(/^file-unreadable .*contains a NUL byte/)
    expect(byFile['vm/base/esc.yaml']).toMatch(/^field-invalid spec\.description: contains a NUL character/)
    expect(byFile['vm/base/latin1.yaml']).toMatch(/^file-unreadable .*not valid UTF-8/)
  })
})
