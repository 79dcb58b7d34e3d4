/**
 * spec.firewall through the CLI, one lifecycle: validate refuses a rule naming an undeclared IP set, apply
 * creates the guest and its firewall, a hand edit on PVE (a rule moved, an option changed) shows as drift and
 * converges, a changed manifest updates the firewall, what is added on PVE by hand is removed, and adopt writes a
 * guest's firewall so that its manifest plans no firewall change.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Simulator } from '@proxops/pve-sim'
import { baseEnv, git, makeRepo, proxops, startLab, vmManifest } from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

let sim: Simulator
let repo: string
const run = (args: string[]) => proxops(args, { cwd: repo, env: baseEnv(repo) })
const FILE = 'vm/lab/edge.yaml'

const firewall = (rules: string) => `  firewall:
    policy-in: DROP
    ipsets:
      - name: admins
        entries:
          - cidr: 10.0.0.0/24
    aliases:
      - name: gw
        cidr: 10.0.0.1
    rules:
${rules}`
const RULES = `      - { direction: in, action: ACCEPT, macro: ssh, source: +admins, comment: ssh }
      - { direction: in, action: ACCEPT, proto: tcp, dport: 443, comment: web }
      - { direction: out, action: ACCEPT, dest: gw, comment: gateway }
`
const manifest = (rules: string) =>
  vmManifest('edge', 120).replace('    - bridge: vmbr0\n', '    - bridge: vmbr0\n      firewall: true\n') +
  firewall(rules)

function commit(text: string): void {
  writeFileSync(path.join(repo, FILE), text)
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'firewall')
}

beforeAll(async () => {
  sim = await startLab()
  repo = await makeRepo(sim, { manifests: { [FILE]: manifest(RULES) } })
})
afterAll(async () => {
  await sim.close()
  rmSync(repo, { recursive: true, force: true })
})

describe('spec.firewall lifecycle', () => {
  it('validate, create, drift, update, prune, adopt', async () => {
    // validate names the file and field of a rule that uses an undeclared IP set
    writeFileSync(path.join(repo, FILE), manifest(RULES.replace('+admins', '+nosuch')))
    const bad = await run(['validate'])
    expect(bad.code).toBe(1)
    expect(bad.stdout + bad.stderr).toMatch(/vm\/lab\/edge\.yaml:\d+:\d+ firewall-ref /)
    expect(bad.stdout + bad.stderr).toContain('no IP set nosuch is declared')
    commit(manifest(RULES))

    // create: the guest, then its firewall
    const created = await run(['apply', '--yes'])
    expect(created.stderr).not.toMatch(/proxops: error/)
    expect(created.code).toBe(0)
    expect(created.stdout).toContain('2 ok')
    const text = sim.control.firewallText(120) ?? ''
    expect(text).toContain('IN SSH(ACCEPT) -source +admins # ssh')
    expect((await run(['diff', '--detailed-exitcode'])).code).toBe(0)

    // drift by hand on PVE: the last rule moved first, the policy opened
    const lines = text
      .slice(text.indexOf('[RULES]\n\n') + 9)
      .trim()
      .split('\n')
    const head = text.slice(0, text.indexOf('[RULES]')).replace('policy_in: DROP', 'policy_in: ACCEPT')
    sim.control.setFirewallText(120, `${head}[RULES]\n\n${[lines[2], lines[0], lines[1]].join('\n')}\n`)
    const drift = await run(['diff', '--detailed-exitcode'])
    expect(drift.code).toBe(2)
    expect(drift.stdout).toContain('spec.firewall.policy-in')
    expect(drift.stdout).toContain('spec.firewall.rules[0]')
    expect((await run(['apply', '--yes'])).code).toBe(0)
    expect(sim.control.firewallText(120)).toBe(text)

    // update from git: a rule changed in place, one added
    commit(
      manifest(RULES.replace('dport: 443', 'dport: 8443') + '      - { direction: in, action: DROP, proto: udp }\n'),
    )
    expect((await run(['apply', '--yes'])).code).toBe(0)
    expect(sim.control.firewallText(120)).toContain(
      'IN ACCEPT -p tcp -dport 8443 # web\nOUT ACCEPT -dest gw # gateway\nIN DROP -p udp\n',
    )
    expect((await run(['diff', '--detailed-exitcode'])).code).toBe(0)

    // prune: a rule and an alias added on PVE by hand are removed (rules and aliases are owned whole)
    const converged = sim.control.firewallText(120) ?? ''
    sim.control.setFirewallText(
      120,
      converged
        .replace('[ALIASES]\n\n', '[ALIASES]\n\nbyhand 10.9.9.9\n')
        .replace('[RULES]\n\n', '[RULES]\n\nIN ACCEPT -p tcp -dport 3389 # by hand\n'),
    )
    const extra = await run(['diff', '--detailed-exitcode'])
    expect(extra.code, extra.stdout).toBe(2)
    expect(extra.stdout).toContain('by hand')
    expect((await run(['apply', '--yes'])).code).toBe(0)
    expect(sim.control.firewallText(120)).toBe(converged)

    // adopt: drop the manifest (the guest stays: it is still owned, prunes need a budget) and adopt it back
    rmSync(path.join(repo, FILE))
    writeFileSync(path.join(repo, 'clusters/lab/resources.yaml'), 'resources: []\n')
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', 'forget')
    const adopted = await run(['adopt', '--cluster', 'lab'])
    expect(adopted.code).toBe(0)
    const file = readFileSync(path.join(repo, 'vm/lab/edge.yaml'), 'utf8')
    expect(file).toContain('firewall:')
    expect(file).toContain('macro: SSH')
    writeFileSync(path.join(repo, 'clusters/lab/resources.yaml'), 'resources:\n  - ../../vm/lab/edge.yaml\n')
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', 'adopted')
    const after = await run(['diff', '--output', 'json'])
    expect(after.stderr).not.toMatch(/proxops: error/)
    const set = JSON.parse(after.stdout) as { plans: { actions: { kind: string }[] }[] }
    expect(set.plans).toHaveLength(1)
    expect(set.plans[0]!.actions.filter((a) => a.kind === 'GuestFirewall')).toEqual([])
  })
})
