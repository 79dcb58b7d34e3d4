/**
 * spec.firewall through observe, plan and execute against the PVE simulator (pve-firewall's VM/CT handlers,
 * create_rule putting a rule first, update_rule's moveto, list digests): a new guest gets its firewall, a drifted
 * one (rules reordered by hand, an extra rule, a changed option) converges, a converged one plans nothing, and an
 * edit between plan and apply fails the action instead of being overwritten at shifted positions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { InProcessSimulator } from '@proxops/pve-sim'
import type { PveClient } from '@proxops/pve-client'
import { simPve, type SimPve } from '../../test-support/sim.js'
import { execute } from '../../execute/execute.js'
import { observe } from '../../observe/observe.js'
import { plan } from '../../plan/plan.js'
import { reconcile } from '../../reconcile/reconcile.js'
import { desired, policy, vm } from '../../fixtures.test.helpers.js'
import type { QemuManifest } from '@proxops/schema'
import type { DesiredFirewall } from './canon.js'

let env: SimPve
let sim: InProcessSimulator
let pve: PveClient

const FIREWALL: DesiredFirewall = {
  enable: true,
  'policy-in': 'DROP',
  rules: [
    { direction: 'in', action: 'ACCEPT', macro: 'SSH', source: '+admins', enable: true, comment: 'ssh' },
    { direction: 'in', action: 'ACCEPT', proto: 'tcp', dport: '443', enable: true, comment: 'web' },
    { direction: 'in', action: 'ACCEPT', proto: 'icmp', 'icmp-type': 'echo-request', enable: true, comment: 'ping' },
    { direction: 'out', action: 'REJECT', dest: 'mail', proto: 'tcp', dport: '25', enable: false, comment: 'smtp' },
  ],
  ipsets: [
    {
      name: 'admins',
      comment: 'ops',
      entries: [
        { cidr: '10.0.0.0/24', nomatch: false },
        { cidr: 'gw', nomatch: true },
      ],
    },
  ],
  aliases: [
    { name: 'gw', cidr: '10.0.0.1' },
    { name: 'mail', cidr: '10.0.9.25', comment: 'relay' },
  ],
}
const guest = (fw: DesiredFirewall = FIREWALL): QemuManifest =>
  vm('fw-web', 600, {
    state: 'stopped',
    networks: [{ model: 'virtio', bridge: 'vmbr0', firewall: true, slot: 'net0' }],
    firewall: fw,
  })

/** one cycle through the planner's reconcile() (which reads the firewalls of the guests it manages) */
async function cycle(m: QemuManifest, apply = true) {
  const { plan: p, report } = await reconcile({
    desired: desired(m),
    reader: pve,
    ...(apply ? { writer: pve } : {}),
    policy: policy(),
    execute: { taskPollIntervalMs: 20 },
  })
  return { plan: p, report: p.actions.length > 0 ? report : undefined }
}

beforeAll(async () => {
  env = simPve({ taskDurationMs: 20 })
  sim = env.sim
  pve = env.client
})
afterAll(async () => {
  await env?.close()
})

describe('spec.firewall against the simulator', () => {
  it('a new guest gets its firewall after its create; then the plan is empty', async () => {
    const { plan: p, report } = await cycle(guest())
    expect(p.actions.map((a) => `${a.kind} ${a.type}`)).toEqual(['VM create', 'GuestFirewall update'])
    const fw = p.actions[1]!
    expect(fw.dependsOn).toEqual([p.actions[0]!.id])
    expect(fw.diffs.find((d) => d.field === 'spec.firewall.rules[0]')?.after).toBe(
      'IN SSH(ACCEPT) -source +admins # ssh',
    )
    expect(report?.results.map((r) => r.status)).toEqual(['ok', 'ok'])
    expect(sim.control.firewallText(600)).toContain('|OUT REJECT -dest mail -p tcp -dport 25 # smtp')
    expect((await cycle(guest(), false)).plan.actions).toEqual([])
  })

  it('drift made by hand (reordered rules, an extra rule, an option) converges by content; then the plan is empty', async () => {
    const text = sim.control.firewallText(600)!
    const rules = text
      .slice(text.indexOf('[RULES]\n\n') + 9)
      .trim()
      .split('\n')
    const shuffled = [rules[2], 'IN ACCEPT -p tcp -dport 8080 # stray', rules[0], rules[3], rules[1]].join('\n')
    sim.control.setFirewallText(
      600,
      text.slice(0, text.indexOf('[RULES]')).replace('policy_in: DROP', 'policy_in: ACCEPT') +
        `[RULES]\n\n${shuffled}\n`,
    )
    const { plan: p, report } = await cycle(guest())
    expect(p.actions.map((a) => `${a.kind} ${a.type}`)).toEqual(['GuestFirewall update'])
    expect(p.actions[0]!.reason).toBe('VM/fw-web: firewall drift (policy-in, rules)')
    expect(p.actions[0]!.diffs).toContainEqual({
      field: 'spec.firewall.policy-in',
      key: 'firewall.options.policy_in',
      before: 'ACCEPT',
      after: 'DROP',
    })
    expect(report?.results[0]).toMatchObject({ status: 'ok' })
    expect((await cycle(guest(), false)).plan.actions).toEqual([])
  })

  it('removing declarations removes them on PVE (rules, ipsets, aliases) but leaves undeclared options alone', async () => {
    const { report } = await cycle(guest({ enable: true, rules: [], ipsets: [], aliases: [] }))
    expect(report?.results[0]).toMatchObject({ status: 'ok' })
    expect(sim.control.firewallText(600)).toBe('[OPTIONS]\n\nenable: 1\npolicy_in: DROP\n\n')
  })

  it('an edit between plan and apply fails the action (compared by content, digests sent)', async () => {
    const d = desired(guest())
    const p = plan(d, await observe('sim', pve, { firewalls: [600] }), policy())
    expect(p.actions.map((a) => `${a.kind} ${a.type}`)).toEqual(['GuestFirewall update'])
    await pve.firewallWrite('pve1', 'qemu', 600, {
      op: 'rule-create',
      rule: { type: 'in', action: 'DROP', enable: '1' },
    })
    const report = await execute(p, pve, { reader: pve, taskPollIntervalMs: 20 })
    expect(report.results[0]).toMatchObject({ status: 'failed' })
    expect(report.results[0]!.error).toContain('firewall of qemu 600 changed since the plan')
    expect(sim.control.firewallText(600)).toContain('[RULES]\n\nIN DROP\n')
  })
})
