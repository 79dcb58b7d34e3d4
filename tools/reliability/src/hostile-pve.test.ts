/**
 * The real CLI against a PVE that misbehaves in ways the simulator never does (a proxy in front of it):
 * answers too large to hold, implausible reads. Each case: a clear non-zero outcome, nothing written.
 */
import { createGzip } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '@proxops/pve-sim'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fc } from '@fast-check/vitest'
import { createPveClient, type PveClient } from '@proxops/pve-client'
import { FILES, commit, doc, makeRepo, resources, runCli, type Repo } from './cli-harness.js'
import { runs } from './soak.js'
import { startHostilePve, type HostilePve } from './hostile-pve.js'

let sim: Simulator
let pve: HostilePve
let repo: Repo

/** gzip of a `{data}` envelope whose string inflates to `mib` MiB (zeros compress about 1000:1). */
async function gzipBomb(mib: number): Promise<Buffer> {
  const gz = createGzip({ level: 9 })
  const out: Buffer[] = []
  gz.on('data', (c: Buffer) => out.push(c))
  const done = new Promise((r) => gz.on('end', r))
  const zeros = Buffer.alloc(1024 * 1024, 0x30)
  gz.write('{"data":"')
  for (let i = 0; i < mib; i++) if (!gz.write(zeros)) await new Promise((r) => gz.once('drain', r))
  gz.end('"}')
  await done
  return Buffer.concat(out)
}

beforeAll(async () => {
  sim = await startSimulator({ taskDurationMs: 20, authFailureDelayMs: 0, resourcesLagMs: 0, log: () => {} })
  pve = await startHostilePve(sim)
  repo = makeRepo(pve)
}, 60_000)
afterAll(async () => {
  repo.cleanup()
  await pve.close()
  await sim.close()
})

describe('hostile PVE (CLI through a misbehaving proxy)', { timeout: 120_000 }, () => {
  it('bomb bodies: a 256 MiB gzip answer is refused at the size cap, once (no retries), and nothing is written', async () => {
    const bomb = await gzipBomb(256)
    expect(bomb.length).toBeLessThan(1024 * 1024)
    pve.tamper((req) =>
      req.path === '/cluster/resources'
        ? { kind: 'answer', headers: { 'content-encoding': 'gzip' }, body: bomb }
        : { kind: 'forward' },
    )
    pve.seen.length = 0
    const run = await runCli(['apply', '--yes'], repo)
    pve.tamper(() => ({ kind: 'forward' }))
    expect(run.signal).toBeNull()
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/answer larger than \d+ bytes/)
    expect(pve.seen.filter((s) => s.path === '/cluster/resources')).toHaveLength(1)
    expect(pve.seen.filter((s) => s.method !== 'GET')).toEqual([])
  })

  // issue 19 item 8: PVE's config_with_pending_array always lists the config's digest, and a node's guest list
  // (vmstatus) names and tags the guest from the same file; a read that contradicts that is no config
  it('implausible reads: a running VM whose /pending is [] or lacks its keys is unknown, never a plan or a shutdown', async () => {
    const converge = await runCli(['apply', '--yes'], repo)
    expect(converge.code, converge.stderr).toBe(0)
    const pending = '/nodes/pve1/qemu/300/pending'
    const cases: { what: string; tamper: Parameters<HostilePve['tamper']>[0]; reason: RegExp }[] = [
      {
        what: 'an empty answer',
        tamper: (req) => (req.path === pending ? { kind: 'answer', body: '{"data":[]}' } : { kind: 'forward' }),
        reason: /implausible read: its \/pending answer has no digest row/,
      },
      {
        what: 'the digest row alone',
        tamper: (req) =>
          req.path === pending
            ? { kind: 'rewrite', data: (rows) => (rows as { key: string }[]).filter((r) => r.key === 'digest') }
            : { kind: 'forward' },
        reason: /implausible read: its config names it "VM 300" but the node's guest list "vm-300"/,
      },
    ]
    for (const c of cases) {
      pve.tamper(c.tamper)
      pve.seen.length = 0
      const diff = await runCli(['diff', '--detailed-exitcode'], repo)
      const apply = await runCli(['apply', '--yes'], repo)
      const status = await runCli(['status'], repo)
      pve.tamper(() => ({ kind: 'forward' }))
      expect(pve.seen.filter((s) => s.path === pending).length, c.what).toBeGreaterThan(0)
      expect(diff.stdout, c.what).toMatch(c.reason)
      expect(diff.stdout, c.what).not.toMatch(/VM\/pve1\/300\(vm-300\) will be/)
      // not "PVE matches git": the guest could not be read
      expect(diff.code, c.what).toBe(2)
      expect(
        pve.seen.filter((s) => s.method !== 'GET'),
        c.what,
      ).toEqual([])
      expect(apply.stdout + apply.stderr, c.what).toMatch(c.reason)
      expect(status.stdout, c.what).not.toMatch(/^converged/m)
      expect(sim.control.guest(300)?.status, c.what).toBe('running')
    }
    const after = await runCli(['diff', '--detailed-exitcode'], repo)
    expect(after.code, after.stdout).toBe(0)
  })
})

/**
 * Issue 30 (items 1, 2 and 7) as attacks from PVE's side, through the built CLI: what others put on the cluster
 * (snapshots named like safety snapshots, guests of another cluster entry, many pools) must neither be rotated,
 * reached by a backup job, HA or a pool, nor make every cycle cost a request per pool.
 */
describe('hostile estate (issue 30 through the CLI)', { timeout: 120_000 }, () => {
  const VMS = 'vm/c/vms.yaml'
  const POOL = 'pool/c/jobs.yaml'
  const JOBS = 'backupjob/c/jobs.yaml'
  const CLAIM = 'vm/c/claim.yaml'
  let own: Simulator
  let admin: PveClient
  let r: Repo
  let files: Record<string, string>
  /** commit `changed` (undefined: removed) and list every file left in the cluster's composition */
  const declare = (changed: Record<string, string | undefined>, message: string): void => {
    for (const [file, text] of Object.entries(changed))
      if (text === undefined) delete files[file]
      else files[file] = text
    commit(r, { ...changed, 'clusters/c/resources.yaml': resources(Object.keys(files)) }, message)
  }
  const vm300Disk = (size: string): string =>
    (FILES[VMS] as string).replace(/(vmid: 300\n[\s\S]*?)size: 4GiB/, `$1size: ${size}`)

  beforeAll(async () => {
    own = await startSimulator({
      nodes: ['pve1', 'pve2'],
      taskDurationMs: 20,
      authFailureDelayMs: 0,
      resourcesLagMs: 0,
      log: () => {},
    })
    admin = createPveClient({
      baseUrl: own.url,
      auth: { type: 'token', tokenId: own.token.id, secret: own.token.secret },
      tls: { fingerprint: own.fingerprint! },
    })
    files = { [VMS]: FILES[VMS] as string }
    r = makeRepo(own, files)
    const config = join(r.root, 'clusters/c/config.yaml')
    commit(
      r,
      { 'clusters/c/config.yaml': `${readFileSync(config, 'utf8')}      safety-snapshots:\n        keep: 1\n` },
      'keep 1',
    )
    const first = await runCli(['apply', '--yes'], r)
    expect(first.code, first.stdout + first.stderr).toBe(0)
  }, 60_000)
  afterAll(async () => {
    r.cleanup()
    await admin.close()
    await own.close()
  })

  // planner safetySnapshotsOf: only a snapshot whose description's first word is this entry's mark is rotated
  it("item 1: lookalikes of safety snapshots (no mark, a forged or another entry's mark) survive rotation with keep: 1 and are reported", async () => {
    const stamp = fc
      .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2029-12-31T23:59:59Z'), noInvalidDate: true })
      .map((d) => `proxops-${d.toISOString().replace(/[-:]|\.\d+/g, '')}`)
    const description = fc.constantFrom(
      undefined,
      'my own pre-upgrade state, keep!',
      'managed-by=proxops.other safety snapshot taken before a disruptive change',
      'managed-by=proxops.cc the entry name with one more letter',
      'managed-by=proxops the bare tag',
      'MANAGED-BY=proxops.c shouted',
      'copied: managed-by=proxops.c safety snapshot',
    )
    const lookalikes = fc.sample(fc.tuple(stamp, fc.boolean(), description), { numRuns: runs(3), seed: 30 })
    const want = new Map<string, string | undefined>()
    for (const [name, suffixed, text] of lookalikes) {
      const n = suffixed ? `${name}-2` : name
      if (want.has(n)) continue
      want.set(n, text)
      await admin.waitTaskOk(
        await admin.createSnapshot('pve1', 'qemu', 300, n, text === undefined ? {} : { description: text }),
        { pollIntervalMs: 10 },
      )
    }
    for (const size of ['5GiB', '6GiB']) {
      declare({ [VMS]: vm300Disk(size) }, `vm-300 disk ${size}`)
      const applied = await runCli(['apply', '--yes'], r)
      expect(applied.code, applied.stdout + applied.stderr).toBe(0)
      const now = await admin.snapshots('pve1', 'qemu', 300)
      for (const [name, text] of want) {
        expect(applied.stdout, name).toContain(`note: left snapshot ${name} alone`)
        expect(
          now.find((s) => s.name === name),
          name,
        ).toMatchObject(text === undefined ? {} : { description: text })
      }
      // keep: 1 counts only the marked ones: the newest of this apply
      const marked = now.filter((s) => !want.has(s.name))
      expect(marked.map((s) => s.description)).toEqual([expect.stringMatching(/^managed-by=proxops\.c /)])
    }
  })

  // planner selectionVerdict, guest ownerOf: a job, HA or a pool may reach only this entry's guests
  it("item 2: backup jobs, HA and a pool reaching another entry's guests are blocked in diff and never written", async () => {
    // another entry's guests; 702's entry name starts with this entry's name
    for (const [vmid, tags] of [
      [701, 'proxops;proxops.other'],
      [702, 'proxops.c2'],
    ] as const)
      await admin.waitTaskOk(
        await admin.createGuest('pve1', 'qemu', { vmid, memory: 512, tags, name: `theirs-${vmid}` }),
        {
          pollIntervalMs: 10,
        },
      )
    declare({ [POOL]: doc('Pool', 'jobs', 'comment: backed up weekly') }, 'pool')
    expect((await runCli(['apply', '--yes'], r)).code).toBe(0)
    // by hand, someone puts a foreign guest into this entry's pool
    await admin.updatePool({ poolid: 'jobs', vms: '701' })
    const theirs = [701, 702].map((v) => own.control.guest(v)?.digest)

    const job = (name: string, selection: string) =>
      doc('BackupJob', name, `schedule: "sun 02:00"\nstorage: local\nmode: stop\nselection:\n  ${selection}`)
    const jobs: Record<string, RegExp> = {
      'j-vmids': /BackupJob\/j-vmids: it names guests this entry does not manage: 701/,
      'j-mixed': /BackupJob\/j-mixed: it names guests this entry does not manage: 702/,
      'j-all': /BackupJob\/j-all: all: true reaches guests of another cluster entry: 701 .*702 /,
      'j-pool': /BackupJob\/j-pool: pool jobs holds guests this entry does not manage: 701/,
    }
    declare(
      {
        [JOBS]: [
          job('j-vmids', 'vmids: [701]'),
          job('j-mixed', 'vmids: [300, 702]'),
          job('j-all', 'all: true'),
          job('j-pool', 'pool: jobs'),
        ].join('---\n'),
        // a manifest claiming 701 with HA and a pool: the guest is another entry's, so neither is written
        [CLAIM]: doc(
          'VM',
          'claim',
          'node: pve1\nvmid: 701\nmemory: 512MiB\ncpu: {type: x86-64-v2-AES, cores: 1}\ndisks:\n  - {storage: local-lvm, size: 1GiB}\npool: jobs\nha: {max_restart: 1}',
        ),
      },
      'jobs reaching other guests',
    )
    own.stats.reset()
    const diff = await runCli(['diff', '--detailed-exitcode'], r)
    expect(diff.code, diff.stderr).toBe(2)
    for (const [name, reason] of Object.entries(jobs)) expect(diff.stdout + diff.stderr, name).toMatch(reason)
    expect(diff.stdout).toMatch(/owned-elsewhere[^\n]*701|701[^\n]*owned by cluster entry other/)
    const apply = await runCli(['apply', '--yes'], r)
    expect(apply.code).not.toBe(0)
    const backup = (await admin.get('/cluster/backup')) as { id: string }[]
    expect(backup.map((j) => j.id)).toEqual([])
    expect(own.stats.count('POST', '/cluster/ha/resources')).toBe(0)
    expect(((await admin.get('/cluster/ha/resources')) as unknown[]).length).toBe(0)
    expect([701, 702].map((v) => own.control.guest(v)?.digest)).toEqual(theirs)
    expect((await admin.pool('jobs')).members.map((m) => m.vmid)).toEqual([701])
    declare({ [JOBS]: undefined, [CLAIM]: undefined }, 'no jobs')
  })

  // planner readPoolList: members come from /cluster/resources; only the pools a write depends on are read one by one
  it('item 7: a diff sends the same requests with 5 or 200 pools on PVE, whatever their comments say', async () => {
    const comments = fc.sample(
      fc.constantFrom(
        undefined,
        'team pool',
        'managed-by=terraform',
        'managed-by=proxops.other their pool',
        'managed-by=proxops the bare tag',
        'managed-by=proxops.cc',
      ),
      { numRuns: 200, seed: 7 },
    )
    const addPools = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const comment = comments[i]
        await admin.createPool({ poolid: `hand${i}`, ...(comment !== undefined ? { comment } : {}) })
        // some hold a guest (another entry's): members must not cost a request either
        if (i % 3 === 0) await admin.updatePool({ poolid: `hand${i}`, vms: String(701 + (i % 2)), 'allow-move': 1 })
      }
    }
    const requests = async () => {
      own.stats.reset()
      const d = await runCli(['diff'], r)
      expect(d.code, d.stderr).toBe(0)
      return { gets: own.stats.count('GET'), all: own.stats.requests.length }
    }
    await addPools(0, 5)
    const few = await requests()
    await addPools(5, 200)
    expect((await admin.pools()).length).toBeGreaterThanOrEqual(200)
    const many = await requests()
    expect(many).toEqual(few)
  })
})

/**
 * Issue 39 item 4 through the built CLI: a list answer whose items lack the shape PVE gives them (an id missing or
 * of the wrong type) makes that kind unreadable for the cycle, with the codec's error naming the endpoint, the item
 * and the field, and no write; never absence. Each case then applies the same change once PVE answers in shape, so
 * the no-write check could have seen a write.
 */
describe('malformed lists (issue 39 item 4 through the CLI)', { timeout: 120_000 }, () => {
  const VM = 'vm/c/n.yaml'
  const POOL = 'pool/c/p1.yaml'
  const JOB = 'backupjob/c/nightly.yaml'
  const CTT = 'ctt/c/debian.yaml'
  const vm = (memory: string, maxRestart: number, port: number): string =>
    doc(
      'VM',
      'n',
      `node: pve1\nvmid: 330\nstate: stopped\nmemory: ${memory}\ncpu: {type: x86-64-v2-AES, cores: 1}\ndisks:\n  - {storage: local-lvm, size: 1GiB}\nnetworks:\n  - {bridge: vmbr0, firewall: true}\npool: p1\nha: {max_restart: ${maxRestart}}\nfirewall:\n  rules:\n    - {direction: in, action: ACCEPT, proto: tcp, dport: ${port}, comment: web}`,
    )
  const job = (schedule: string): string =>
    doc('BackupJob', 'nightly', `schedule: "${schedule}"\nstorage: local\nmode: snapshot\nselection:\n  vmids: [330]`)
  let own: Simulator
  let proxy: HostilePve
  let r: Repo
  let files: Record<string, string>
  const declare = (changed: Record<string, string>): void => {
    Object.assign(files, changed)
    commit(r, { ...changed, 'clusters/c/resources.yaml': resources(Object.keys(files)) }, 'change')
  }
  beforeAll(async () => {
    own = await startSimulator({ taskDurationMs: 20, authFailureDelayMs: 0, resourcesLagMs: 0, log: () => {} })
    proxy = await startHostilePve(own)
    files = { [VM]: vm('512MiB', 1, 443), [POOL]: doc('Pool', 'p1', 'comment: first'), [JOB]: job('sun 02:00') }
    r = makeRepo(proxy, files)
    const first = await runCli(['apply', '--yes'], r)
    expect(first.code, first.stdout + first.stderr).toBe(0)
  }, 60_000)
  afterAll(async () => {
    r.cleanup()
    await proxy.close()
    await own.close()
  })

  const append =
    (item: unknown) =>
    (real: unknown): unknown => [...(Array.isArray(real) ? (real as unknown[]) : []), item]
  const CASES: {
    kind: string
    change: () => Record<string, string>
    /** the concrete paths whose answers are malformed */
    path: RegExp
    data: (real: unknown) => unknown
    /** the writes that depend on the list */
    writes: RegExp
    /** the endpoint, item and field the error names */
    says: RegExp
  }[] = [
    {
      kind: 'guest: a node guest list with a vmid that is not one',
      change: () => ({ [VM]: vm('768MiB', 1, 443) }),
      path: /^\/nodes\/pve1\/qemu$/,
      data: append({ vmid: true, status: 'running' }),
      writes: /^\/nodes\/pve1\/qemu\/330\/config$/,
      says: /GET \/nodes\/\{node\}\/qemu: qemu\[\d+\]\.vmid: expected a vmid/,
    },
    {
      kind: 'every kind: the cluster listing with a guest row without its vmid',
      change: () => ({ [VM]: vm('1GiB', 1, 443) }),
      path: /^\/cluster\/resources$/,
      data: append({ id: 'qemu/999', type: 'qemu', node: 'pve1', status: 'running' }),
      writes: /./,
      says: /GET \/cluster\/resources: resources\[\d+\]\.vmid: missing/,
    },
    {
      kind: 'pool: a pool without its id',
      change: () => ({ [POOL]: doc('Pool', 'p1', 'comment: second') }),
      path: /^\/pools$/,
      data: append({ poolid: false, comment: 'p1' }),
      writes: /^\/pools/,
      says: /GET \/pools: pools\[\d+\]\.poolid: expected an id/,
    },
    {
      kind: 'HA: a resource without its sid',
      change: () => ({ [VM]: vm('512MiB', 2, 443) }),
      path: /^\/cluster\/ha\/resources$/,
      data: append({ type: 'vm', state: 'started' }),
      writes: /^\/cluster\/ha\//,
      says: /GET \/cluster\/ha\/resources: resources\[\d+\]\.sid: expected an id/,
    },
    {
      kind: 'backup job: a job whose type is not a string',
      change: () => ({ [JOB]: job('sat 03:00') }),
      path: /^\/cluster\/backup$/,
      data: append({ id: 'other', type: 5, schedule: 'daily' }),
      writes: /^\/cluster\/backup/,
      says: /GET \/cluster\/backup: backup jobs\[\d+\]\.type: expected a job type/,
    },
    {
      kind: 'firewall: a rule without its position',
      change: () => ({ [VM]: vm('512MiB', 2, 8443) }),
      path: /^\/nodes\/pve1\/qemu\/330\/firewall\/rules$/,
      data: (real) => (real as Record<string, unknown>[]).map(({ pos: _pos, ...rule }) => rule),
      writes: /\/firewall\//,
      says: /firewall: rules\[0\]\.pos: expected a position/,
    },
    {
      kind: 'artifact: a volume without its volid',
      change: () => ({ [CTT]: FILES[CTT] as string }),
      path: /^\/nodes\/pve[12]\/storage\/local\/content$/,
      data: append({ content: 'vztmpl', volid: '', size: 1 }),
      writes: /download-url/,
      says: /GET \/nodes\/\{node\}\/storage\/\{storage\}\/content: content\[\d+\]\.volid: expected an id/,
    },
  ]

  for (const c of CASES) {
    it(c.kind, async () => {
      declare(c.change())
      const writes = (): number => proxy.seen.filter((s) => s.method !== 'GET' && c.writes.test(s.path)).length
      proxy.seen.length = 0
      proxy.tamper((req) => (c.path.test(req.path) ? { kind: 'rewrite', data: c.data } : { kind: 'forward' }))
      const blocked = await runCli(['apply', '--yes'], r)
      proxy.tamper(() => ({ kind: 'forward' }))
      expect(proxy.seen.some((s) => c.path.test(s.path))).toBe(true)
      expect(blocked.code, blocked.stdout + blocked.stderr).not.toBe(0)
      expect(blocked.stdout + blocked.stderr).toMatch(c.says)
      expect(writes()).toBe(0)
      const applied = await runCli(['apply', '--yes'], r)
      expect(applied.code, applied.stdout + applied.stderr).toBe(0)
      expect(writes()).toBeGreaterThan(0)
    })
  }
})
