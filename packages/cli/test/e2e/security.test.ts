/**
 * What an attacker or a mistake can make ProxOps do (issue 19, items 1-6), through the CLI against
 * the simulator: tampered saved plans, one PVE under two names, hostile git config, plain http, secrets
 * in live values, tokens in the git URL.
 */
import { describe, expect, it } from 'vitest'
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { encryptSops } from '@proxops/sops'
import {
  AGE_KEY_FILE,
  CANARY,
  TOKEN_ID,
  errorLines,
  findCanaries,
  git,
  homeFor,
  vmManifest,
  useLab,
  runIn,
  type RepoOptions,
  transcriptCanaries,
} from './harness.js'

const lab = useLab({ host: '0.0.0.0' })
const tokenEnv = { PROXOPS_PVE_TOKEN_VALUE: `${TOKEN_ID}=${CANARY.token}` }

const repo = (options: RepoOptions = {}): Promise<string> =>
  lab.repo({ baseUrl: lab.sim.url.replace('0.0.0.0', '127.0.0.1'), ...options })

const vmids = () =>
  lab.sim.control
    .guests()
    .map((g) => g.vmid)
    .sort((a, b) => a - b)

describe('19.1 a saved plan is a contract: apply --plan re-derives it and refuses any other', () => {
  it('refuses a plan edited to delete an untagged guest, to lift the budget, or to use an action type no plan has', async () => {
    const root = await repo({
      sops: false,
      manifests: { 'vm/lab/a.yaml': vmManifest('a', 110), 'vm/lab/b.yaml': vmManifest('b', 111) },
    })
    expect((await runIn(root, ['apply', '--yes'], tokenEnv)).code).toBe(0)
    // 111 loses the ownership tag on PVE and leaves git: a fresh plan never touches it
    lab.sim.control.driftSet(111, 'tags', 'hand-made')
    rmSync(path.join(root, 'vm/lab/b.yaml'))
    writeFileSync(path.join(root, 'clusters/lab/resources.yaml'), 'resources:\n  - ../../vm/lab/a.yaml\n')
    git(root, 'commit', '-qam', 'b leaves git')
    const planFile = path.join(root, '..', `${path.basename(root)}-plan.json`)
    lab.removeAfter(planFile)
    expect((await runIn(root, ['diff', '--out', planFile], tokenEnv)).code).toBe(0)
    const original = readFileSync(planFile, 'utf8')
    const g = lab.sim.control.guest(111)
    const tamper = (edit: (plan: { actions: unknown[]; policy: Record<string, unknown> }) => void): string => {
      const set = JSON.parse(original) as { plans: { actions: unknown[]; policy: Record<string, unknown> }[] }
      edit(set.plans[0] as { actions: unknown[]; policy: Record<string, unknown> })
      return JSON.stringify(set)
    }
    const del = (type: string) => ({
      id: `VM/pve1/111(b)#${type}`,
      address: 'VM/pve1/111(b)',
      kind: 'VM',
      name: 'b',
      node: 'pve1',
      vmid: 111,
      type,
      reason: 'edited in',
      diffs: [],
      disruption: 'none',
      tier: 9,
      level: 0,
      digest: g?.digest,
      requests: [{ call: 'deleteGuest', node: 'pve1', guest: 'qemu', vmid: 111 }],
    })
    const cases: Array<[string, string, RegExp]> = [
      [
        'untagged delete',
        tamper((p) => p.actions.push(del('delete'))),
        /action 1 \(VM\/pve1\/111\(b\) delete\) is not in a fresh plan/,
      ],
      [
        'unknown action type',
        tamper((p) => p.actions.push(del('detach-disk'))),
        /action 1 \(VM\/pve1\/111\(b\) detach-disk\) is not in a fresh plan/,
      ],
      ['budget lifted', tamper((p) => (p.policy.pruneBudget = 'unlimited')), /made with another policy/],
    ]
    for (const [what, text, message] of cases) {
      writeFileSync(planFile, text)
      const writes = lab.sim.stats.writes()
      const r = await runIn(root, ['apply', '--plan', planFile, '--yes'], tokenEnv)
      expect(r.code, what).toBe(1)
      expect(errorLines(r.stderr).join('\n'), what).toMatch(
        /the saved plan is not the plan the repository and live PVE give now/,
      )
      expect(r.stderr, what).toMatch(message)
      expect(lab.sim.stats.writes(), what).toBe(writes)
      expect(vmids(), what).toContain(111)
    }
    // the untampered plan still applies
    writeFileSync(planFile, original)
    expect((await runIn(root, ['apply', '--plan', planFile, '--yes'], tokenEnv)).code).toBe(0)
    expect(vmids()).toContain(111)
  })
})

describe('19.2 one PVE cluster under two names', () => {
  const twinRepo = async (other: string): Promise<string> => {
    const root = await repo({ cluster: 'a', sops: false, manifests: { 'vm/a/x.yaml': vmManifest('x', 120) } })
    mkdirSync(path.join(root, 'clusters/b'), { recursive: true })
    mkdirSync(path.join(root, 'vm/b'), { recursive: true })
    writeFileSync(path.join(root, 'vm/b/y.yaml'), vmManifest('y', 121))
    writeFileSync(
      path.join(root, 'clusters/b/config.yaml'),
      `pve:\n  clusters:\n    b:\n      base-url: ${other}\n      nodes: [pve1, pve2]\n      tls:\n        fingerprint: "${lab.sim.fingerprint}"\n`,
    )
    writeFileSync(path.join(root, 'clusters/b/resources.yaml'), 'resources:\n  - ../../vm/b/y.yaml\n')
    git(root, 'add', '-A')
    git(root, 'commit', '-qm', 'second name')
    return root
  }
  const port = () => new URL(lab.sim.url).port

  it('refuses two spellings of one endpoint before any request (127.0.0.1 and localhost)', async () => {
    const root = await twinRepo(`https://localhost:${port()}`)
    const requests = lab.sim.stats.requests.length
    const r = await runIn(root, ['apply', '--yes'], tokenEnv)
    expect(r.code).toBe(1)
    expect(errorLines(r.stderr)).toEqual([
      expect.stringMatching(
        /clusters\/b\/config\.yaml: pve\.clusters\.b\.base-url: https:\/\/localhost:\d+ reaches the same address as cluster "a" .*keep one entry/,
      ),
    ])
    expect(lab.sim.stats.requests.length).toBe(requests)
  })

  it('refuses two addresses of one PVE cluster by what /cluster/status says, and prunes nothing', async () => {
    // the guests each entry would prune as "absent in git" exist and are owned
    const seed = await repo({
      cluster: 'lab',
      sops: false,
      manifests: { 'vm/lab/x.yaml': vmManifest('x', 120), 'vm/lab/y.yaml': vmManifest('y', 121) },
    })
    const seeded = await runIn(seed, ['apply', '--yes'], tokenEnv)
    // guests left by earlier tests on this simulator may keep the cycle from "converged"; what matters is 120, 121
    expect([0, 1], seeded.stderr).toContain(seeded.code)
    expect(vmids()).toEqual(expect.arrayContaining([120, 121]))
    const root = await twinRepo(`https://127.0.0.2:${port()}`)
    const writes = lab.sim.stats.writes()
    const r = await runIn(root, ['apply', '--yes'], tokenEnv)
    expect(r.code).toBe(1)
    const lines = errorLines(r.stderr)
    expect(lines).toHaveLength(2)
    for (const line of lines)
      expect(line).toMatch(/cluster [ab]: clusters "a" and "b" are the same PVE cluster "sim" \(nodes pve1, pve2\)/)
    expect(lab.sim.stats.writes()).toBe(writes)
    expect(vmids()).toEqual(expect.arrayContaining([120, 121]))
    // diff says the same, read-only
    const d = await runIn(root, ['diff'], tokenEnv)
    expect(d.code).toBe(1)
    expect(d.stdout).toContain('ABORTED: not planned (the error is on stderr)')
    expect(d.stderr).toMatch(/proxops: error: cluster a: clusters "a" and "b" are the same PVE cluster/)
  })
})

describe('19.2 ownership names the cluster entry', () => {
  it("two repositories on one PVE cluster never prune each other's guests; an unmarked guest is claimed, never pruned", async () => {
    const x = vmManifest('ox', 140)
    const a = await repo({
      cluster: 'own-a',
      sops: false,
      manifests: {
        'vm/own-a/ox.yaml': x,
        'vm/own-a/oy.yaml': vmManifest('oy', 141),
        'vm/own-a/oz.yaml': vmManifest('oz', 142),
      },
    })
    expect((await runIn(a, ['apply', '--yes'], tokenEnv)).code).toBe(0)
    expect(lab.sim.control.guest(140)?.config.tags).toBe('e2e;proxops;proxops.own-a')
    // 141 as a guest tagged before markers existed
    lab.sim.control.driftSet(141, 'tags', 'e2e;proxops')
    const b = await repo({ cluster: 'own-b', sops: false, manifests: { 'vm/own-b/ow.yaml': vmManifest('ow', 143) } })
    const rb = await runIn(b, ['apply', '--yes'], tokenEnv)
    expect(vmids()).toEqual(expect.arrayContaining([140, 141, 142, 143]))
    // the unmarked guest keeps b from "converged" and says how to hand it over; a's marked guests are not b's
    expect(rb.code, rb.stderr).toBe(1)
    expect(rb.stdout).toMatch(/blocked \(1 object blocked: unmarked 1\)/)
    const db = await runIn(b, ['diff'], tokenEnv)
    expect(db.stdout).toMatch(/141.*without a cluster-entry marker.*add the tag proxops\.own-b/)
    expect(db.stdout).toMatch(/No actions possible/)
    // b declaring a's vmid is an anomaly naming the owner, not a takeover
    writeFileSync(path.join(b, 'vm/own-b/ow.yaml'), vmManifest('ox', 140))
    git(b, 'commit', '-qam', 'claim 140')
    const claim = await runIn(b, ['diff'], tokenEnv)
    expect(claim.stdout).toMatch(/owned by cluster entry own-a \(tag proxops\.own-a\)/)
    // a claims its unmarked guest (the marker is a tags update) and prunes its own
    writeFileSync(
      path.join(a, 'clusters/own-a/resources.yaml'),
      'resources:\n  - ../../vm/own-a/ox.yaml\n  - ../../vm/own-a/oy.yaml\n',
    )
    git(a, 'commit', '-qam', 'oz leaves git')
    const ra = await runIn(a, ['apply', '--yes'], tokenEnv)
    expect(ra.code, ra.stderr).toBe(0)
    expect(lab.sim.control.guest(141)?.config.tags).toBe('e2e;proxops;proxops.own-a')
    expect(vmids()).not.toContain(142)
    expect(vmids()).toEqual(expect.arrayContaining([140, 141, 143]))
  })
})

describe("19.3 git's ownership check stays on; the repository's executable config never runs", () => {
  it('never runs core.fsmonitor or hooks, and refuses a checkout owned by another user', async () => {
    const root = await repo({ sops: false, manifests: {} })
    const marker = path.join(path.dirname(root), `${path.basename(root)}-ran`)
    lab.removeAfter(marker)
    const script = path.join(path.dirname(root), `${path.basename(root)}-fsmonitor.sh`)
    lab.removeAfter(script)
    writeFileSync(script, `#!/bin/sh\necho "$PROXOPS_PVE_TOKEN_VALUE" > ${marker}\n`)
    chmodSync(script, 0o755)
    git(root, 'config', 'core.fsmonitor', script)
    git(root, 'config', 'core.hooksPath', path.dirname(script))
    writeFileSync(path.join(root, 'untracked.txt'), 'x\n')
    const r = await runIn(root, ['diff'], tokenEnv)
    expect(r.code, r.stderr).toBe(0)
    expect(existsSync(marker)).toBe(false)
    if (process.getuid?.() === 0) {
      execFileSync('chown', ['-R', '65534:65534', root])
      const refused = await runIn(root, ['diff'], tokenEnv)
      expect(refused.code).toBe(1)
      expect(errorLines(refused.stderr).join('\n')).toMatch(
        /dubious ownership.*git config --global --add safe\.directory/,
      )
      expect(existsSync(marker)).toBe(false)
    }
  })
})

describe('19.4 credentials follow the commit', () => {
  it('refuses a plain-http base-url unless the environment allows it; nothing reaches the endpoint', async () => {
    const seen: string[] = []
    const server = createHttpServer((req, res) => {
      seen.push(String(req.headers.authorization ?? ''))
      res.statusCode = 401
      res.end()
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
    try {
      const root = await repo({ sops: false, manifests: {}, baseUrl: url, fingerprint: null })
      const r = await runIn(root, ['diff'], tokenEnv)
      expect(r.code).toBe(1)
      expect(errorLines(r.stderr)).toEqual([
        expect.stringMatching(
          / clusters\/lab\/config\.yaml endpoint-refused pve\.clusters\.lab\.base-url: plain http .* use https, or allow it outside the repository with PROXOPS_ALLOW_HTTP=1/,
        ),
      ])
      expect(seen).toEqual([])
      const allowed = await runIn(root, ['diff'], { ...tokenEnv, PROXOPS_ALLOW_HTTP: '1' })
      expect(allowed.code).toBe(1)
      expect(seen.length).toBeGreaterThan(0)
    } finally {
      server.close()
    }
  })
})

describe('19.4 SOPS credentials are pinned to their first endpoint', () => {
  it('refuses a commit that changes base-url before any request; only --accept-endpoint moves the pin', async () => {
    const url = lab.sim.url.replace('0.0.0.0', '127.0.0.1')
    const root = await repo({ manifests: {} })
    const first = await runIn(root, ['diff'])
    expect(first.code, first.stderr).toBe(0)
    const pins = readFileSync(path.join(homeFor(root), '.local/share/proxops/endpoint-pins.json'), 'utf8')
    expect(pins).toContain(url)
    expect(findCanaries(pins)).toEqual([])
    // the pin is the operator's state, outside the repository: the work tree stays clean
    expect(git(root, 'status', '--porcelain')).toBe('')
    // someone without the age key commits another address (here: of the same machine)
    const moved = url.replace('127.0.0.1', '127.0.0.2')
    const config = path.join(root, 'clusters/lab/config.yaml')
    writeFileSync(config, readFileSync(config, 'utf8').replace(url, moved))
    git(root, 'commit', '-qam', 'move the endpoint')
    const requests = lab.sim.stats.requests.length
    const refused = await runIn(root, ['diff'])
    expect(refused.code).toBe(1)
    expect(errorLines(refused.stderr)).toEqual([
      expect.stringMatching(
        / clusters\/lab\/config\.yaml endpoint-refused pve\.clusters\.lab\.base-url: the host changed from 127\.0\.0\.1 to 127\.0\.0\.2 since its SOPS credentials were pinned to https:\/\/127\.0\.0\.1:\d+ .*accept it with: proxops diff --cluster lab --accept-endpoint lab$/,
      ),
    ])
    expect(lab.sim.stats.requests.length).toBe(requests)
    // the operator accepts the move once; later runs use the new pin
    expect((await runIn(root, ['diff', '--accept-endpoint', 'lab'])).code).toBe(0)
    expect((await runIn(root, ['diff'])).code).toBe(0)
    writeFileSync(config, readFileSync(config, 'utf8').replace(moved, url))
    git(root, 'commit', '-qam', 'move it back')
    expect((await runIn(root, ['diff'])).code).toBe(1)
  })
})

describe('19.4 an endpoint bound in the SOPS file', () => {
  const recipient = () => /public key: (age1[0-9a-z]+)/.exec(readFileSync(AGE_KEY_FILE, 'utf8'))?.[1] as string

  it('refuses a committed base-url or fingerprint that is not the one the encrypted file binds, before any request', async () => {
    const url = lab.sim.url.replace('0.0.0.0', '127.0.0.1')
    const root = await repo({ manifests: {} })
    const plain = `secrets:\n  pve-user: root@pam\n  pve-token-id: proxops\n  pve-token: ${CANARY.token}\n  pve-endpoint: ${url}\n  pve-fingerprint: "${(lab.sim.fingerprint ?? '').toLowerCase()}"\n`
    writeFileSync(
      path.join(root, 'clusters/lab/secrets.sops.yaml'),
      await encryptSops(plain, { recipients: [recipient()], file: 'secrets.sops.yaml' }),
    )
    git(root, 'commit', '-qam', 'bind the endpoint')
    const ok = await runIn(root, ['diff'])
    expect(ok.code, ok.stderr).toBe(0)
    // someone without the age key commits another address of the same machine
    const config = path.join(root, 'clusters/lab/config.yaml')
    writeFileSync(config, readFileSync(config, 'utf8').replace(url, url.replace('127.0.0.1', '127.0.0.2')))
    git(root, 'commit', '-qam', 'move the endpoint')
    const requests = lab.sim.stats.requests.length
    const moved = await runIn(root, ['diff'])
    expect(moved.code).toBe(1)
    expect(errorLines(moved.stderr)).toEqual([
      expect.stringMatching(
        / clusters\/lab\/config\.yaml endpoint-refused pve\.clusters\.lab\.base-url: https:\/\/127\.0\.0\.2:\d+ is not the endpoint its secrets file binds \(pve-endpoint https:\/\/127\.0\.0\.1:\d+\)/,
      ),
    ])
    expect(lab.sim.stats.requests.length).toBe(requests)
    // the endpoint shown in the error is not masked, the token is
    expect(findCanaries(moved.stdout + moved.stderr)).toEqual([])
  })
})

describe('19.5 redaction is structural', () => {
  // a registered secret with the characters JSON escapes, seen by PVE in a live value
  const secret = 'pw"CANARY\\q-5e77'
  const recipient = () => /public key: (age1[0-9a-z]+)/.exec(readFileSync(AGE_KEY_FILE, 'utf8'))?.[1] as string
  const spellings = (token: string): string[] => [
    secret,
    JSON.stringify(secret).slice(1, -1),
    token,
    token.toUpperCase(),
    Buffer.from(`${TOKEN_ID}=${token}`).toString('base64'),
    encodeURIComponent(secret),
  ]
  const leaks = (text: string): string[] => spellings(CANARY.token).filter((s) => text.includes(s))

  it('keeps the secret out of diff text and JSON, the saved plan, status JSON and adopted manifests', async () => {
    const root = await repo({
      manifests: {
        'vm/lab/r.yaml': vmManifest('r', 130).replace('  tags: [e2e]', '  pve-description: managed\n  tags: [e2e]'),
      },
    })
    const plain = `secrets:\n  pve-user: root@pam\n  pve-token-id: proxops\n  pve-token: ${CANARY.token}\ncloud-init:\n  passwords:\n    default: ${JSON.stringify(secret)}\n`
    writeFileSync(
      path.join(root, 'clusters/lab/secrets.sops.yaml'),
      await encryptSops(plain, { recipients: [recipient()], file: 'secrets.sops.yaml' }),
    )
    git(root, 'commit', '-qam', 'secret with quotes')
    expect([0, 1]).toContain((await runIn(root, ['apply', '--yes'])).code)
    expect(vmids()).toContain(130)
    const echoed = `notes: ${secret} / ${CANARY.token.toUpperCase()} / ${Buffer.from(`${TOKEN_ID}=${CANARY.token}`).toString('base64')}`
    lab.sim.control.driftSet(130, 'description', echoed)
    const planFile = path.join(root, '..', `${path.basename(root)}-redacted.json`)
    lab.removeAfter(planFile)
    const outputs = [
      await runIn(root, ['diff']),
      await runIn(root, ['diff', '-o', 'json']),
      await runIn(root, ['diff', '--out', planFile]),
      await runIn(root, ['status', '-o', 'json']),
    ]
    for (const r of outputs) {
      expect([0, 2], r.stderr).toContain(r.code)
      expect(leaks(r.stdout + r.stderr)).toEqual([])
    }
    expect(outputs[0]?.stdout).toContain('(sensitive)')
    expect(leaks(readFileSync(planFile, 'utf8'))).toEqual([])
    // the redacted saved plan is still the plan a fresh one gives (both redacted alike)
    const applied = await runIn(root, ['apply', '--plan', planFile, '--yes'])
    expect(applied.stderr).not.toMatch(/saved plan/)
    expect(lab.sim.control.guest(130)?.config.description).toBe('managed')

    lab.sim.control.driftSet(130, 'description', echoed)
    const empty = await repo({ manifests: {} })
    writeFileSync(
      path.join(empty, 'clusters/lab/secrets.sops.yaml'),
      await encryptSops(plain, { recipients: [recipient()], file: 'secrets.sops.yaml' }),
    )
    git(empty, 'commit', '-qam', 'same secrets')
    const adopted = await runIn(empty, ['adopt', '--cluster', 'lab'])
    expect(adopted.code, adopted.stderr).toBe(0)
    // a free-text field: written masked, and said so by name
    expect(adopted.stdout).toMatch(
      /vm\/lab\/r\.yaml: spec\.pve-description held a secret; it is written as \(sensitive\)/,
    )
    const written = readdirSync(path.join(empty, 'vm/lab')).map((f) =>
      readFileSync(path.join(empty, 'vm/lab', f), 'utf8'),
    )
    expect(written.join('\n')).toContain('(sensitive)')
    expect(leaks(written.join('\n') + adopted.stdout + adopted.stderr)).toEqual([])
  })
})

describe('19.6 git credentials never in argv or on disk', () => {
  it('a token in --git-url is kept out of the output and of the stored remote', async () => {
    const root = await repo({ sops: false, manifests: {} })
    const data = lab.tmp('proxops-data-')
    const r = await runIn(
      root,
      ['diff', '--git-url', `https://deploy:${CANARY.gitToken}@127.0.0.1:1/ops.git`, '--data-dir', data],
      tokenEnv,
    )
    expect(r.code).toBe(1)
    expect(findCanaries(r.stdout + r.stderr)).toEqual([])
    const stored = readFileSync(path.join(data, 'git-cache', '.git', 'config'), 'utf8')
    expect(stored).toContain('url = https://127.0.0.1:1/ops.git')
    expect(stored).not.toContain(CANARY.gitToken)
  })
})

describe('canaries', () => {
  it('no planted secret appeared in any output of this file', () => {
    expect(transcriptCanaries()).toEqual([])
  })
})
