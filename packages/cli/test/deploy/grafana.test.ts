/**
 * deploy/grafana/proxops.json: importable as it is (a datasource variable, no unresolved inputs, unique panel ids
 * on the grid), and every metric a panel or a variable queries is one the daemon exports. Each query also parses
 * as PromQL (promtool), so the name check reads real expressions.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PROMTOOL, describeWith } from '../support/external-tool.js'
import { exportedSeries, repoRoot } from '../support/exported-metrics.js'
import { metricNames } from '../support/promql.js'

interface Target {
  refId: string
  expr: string
  datasource?: { type: string; uid: string }
}
interface Panel {
  id: number
  type: string
  title: string
  gridPos: { x: number; y: number; w: number; h: number }
  datasource?: { type: string; uid: string }
  targets?: Target[]
}
interface Dashboard {
  uid: string
  title: string
  schemaVersion: number
  panels: Panel[]
  templating: { list: { name: string; type: string; query: unknown; datasource?: unknown }[] }
  __inputs?: unknown
}

const DASHBOARD = new URL('deploy/grafana/proxops.json', repoRoot)
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard

/** every query of the dashboard, with where it is */
function queries(d: Dashboard): { where: string; expr: string }[] {
  return [
    ...d.panels.flatMap((p) =>
      (p.targets ?? []).map((t) => ({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr })),
    ),
    ...d.templating.list
      .filter((v) => v.type === 'query')
      .map((v) => ({
        where: `variable ${v.name}`,
        expr: typeof v.query === 'string' ? v.query : (v.query as { query: string }).query,
      })),
  ]
}

/** Grafana's variables replaced by values PromQL accepts, for promtool */
const concrete = (expr: string): string =>
  expr
    .replace(/\$__rate_interval|\$__interval|\$__range/g, '5m')
    .replace(/\$\{?\w+\}?/g, '.*')
    .replace(/^label_values\(([^,]*),\s*\w+\)$/, '$1')

describe('the Grafana dashboard', () => {
  it('is importable as it is: one Prometheus datasource variable, unique ids, panels on the 24-column grid', () => {
    expect(dashboard).toMatchObject({ uid: 'proxops', title: 'ProxOps' })
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36)
    expect(dashboard.__inputs).toBeUndefined()
    expect(JSON.stringify(dashboard)).not.toMatch(/\$\{DS_/)
    expect(dashboard.templating.list.find((v) => v.name === 'datasource')).toMatchObject({
      type: 'datasource',
      query: 'prometheus',
    })
    const ids = dashboard.panels.map((p) => p.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const p of dashboard.panels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' })
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24)
      expect(p.targets?.length, p.title).toBeGreaterThan(0)
    }
  })

  it('shows what an operator looks for', () => {
    const text = queries(dashboard)
      .map((q) => q.expr)
      .join('\n')
    for (const metric of [
      'proxops_converged',
      'proxops_blocked_objects',
      'proxops_cycle_duration_seconds_bucket',
      'proxops_actions_total',
      'proxops_pve_request_duration_seconds_count',
      'proxops_last_success_timestamp_seconds',
    ])
      expect(text).toContain(metric)
  })

  it('queries only metrics the daemon exports', async () => {
    const exported = await exportedSeries()
    const missing = queries(dashboard).flatMap((q) =>
      metricNames(q.expr)
        .filter((name) => !exported.has(name))
        .map((name) => `${q.where}: ${name}`),
    )
    expect(missing).toEqual([])
    expect(queries(dashboard).length).toBeGreaterThan(10)
  })
})

describeWith(PROMTOOL, 'the Grafana dashboard (promtool)', () => {
  it('every query parses as PromQL', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'proxops-dashboard-'))
    try {
      const rules = queries(dashboard).map(
        (q, i) => `      - record: q${i}\n        expr: ${JSON.stringify(concrete(q.expr))}`,
      )
      const file = path.join(dir, 'queries.yml')
      writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`)
      expect(execFileSync(PROMTOOL.command, ['check', 'rules', file], { encoding: 'utf8' })).toContain(
        `SUCCESS: ${rules.length} rules found`,
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
