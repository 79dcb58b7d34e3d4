/**
 * deploy/prometheus/proxops.rules.yml: `promtool check rules` accepts it, `promtool test rules` runs a unit test of
 * every alert (deploy/prometheus/proxops.rules.test.yml), and its expressions query only what the daemon exports.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { PROMTOOL, describeWith } from '../support/external-tool.js'
import { exportedSeries, repoRoot } from '../support/exported-metrics.js'
import { metricNames } from '../support/promql.js'

const dir = fileURLToPath(new URL('deploy/prometheus/', repoRoot))
const RULES = `${dir}proxops.rules.yml`
const TESTS = `${dir}proxops.rules.test.yml`

interface Rule {
  alert?: string
  record?: string
  expr: string
}
const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules)
const alerts = rules.flatMap((r) => (r.alert ? [r.alert] : []))
const unitTests = parse(readFileSync(TESTS, 'utf8')) as {
  rule_files: string[]
  tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[]
}

const promtool = (...args: string[]) => spawnSync(PROMTOOL.command, args, { cwd: dir, encoding: 'utf8' })

describe('the Prometheus alert rules', () => {
  it('alert on a cluster not converging for N cycles, blocked objects, failing cycles, a stale success, PVE unreachable', () => {
    expect(alerts).toEqual(
      expect.arrayContaining([
        'ProxOpsNotConverging',
        'ProxOpsObjectsBlocked',
        'ProxOpsCyclesFailing',
        'ProxOpsNotReconciling',
        'ProxOpsPveUnreachable',
      ]),
    )
    expect(new Set(alerts).size).toBe(alerts.length)
  })

  it('query only metrics the daemon exports', async () => {
    const exported = await exportedSeries()
    const missing = rules.flatMap((r) =>
      metricNames(r.expr)
        .filter((n) => !exported.has(n))
        .map((n) => `${r.alert ?? r.record}: ${n}`),
    )
    expect(missing).toEqual([])
  })

  it('each alert has a unit test that sees it fire and one that sees it quiet', () => {
    expect(unitTests.rule_files).toEqual(['proxops.rules.yml'])
    const cases = unitTests.tests.flatMap((t) => t.alert_rule_test)
    for (const alert of alerts) {
      const mine = cases.filter((c) => c.alertname === alert)
      expect(
        mine.some((c) => c.exp_alerts.length > 0),
        `${alert} fires`,
      ).toBe(true)
      expect(
        mine.some((c) => c.exp_alerts.length === 0),
        `${alert} stays quiet`,
      ).toBe(true)
    }
  })
})

describeWith(PROMTOOL, 'the Prometheus alert rules (promtool)', () => {
  it('promtool check rules accepts them', () => {
    const r = promtool('check', 'rules', RULES)
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toContain(`SUCCESS: ${rules.length} rules found`)
  })

  it('promtool test rules: every unit test passes', () => {
    const r = promtool('test', 'rules', TESTS)
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(/SUCCESS/)
  })
})
