import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { paint, useColor } from './color.js'
import { canonicalJson } from './json.js'
import { renderPlanMarkdown } from './plan-markdown.js'
import { countActions, diffLine, renderPlanText, summaryLine, symbolOf } from './plan-text.js'
import type { Action } from '@proxops/planner'
import { ACTIONS, fixturePlan } from './fixtures.test-support.js'

describe('text renderer', () => {
  it('renders Terraform-style blocks, diffs, sections and the summary', () => {
    const text = renderPlanText(fixturePlan(), paint(false))
    expect(text).toBe(
      [
        'Cluster homelab at 0123456789ab',
        '',
        'ProxOps will perform the following actions:',
        '',
        '  # VM/pve1/100(web) will be created',
        '  # VM/web: not on PVE',
        '  + VM/pve1/100(web)',
        '      + spec.memory (memory) = "2048"',
        '      + spec.cloud-init-data.ci-password-ref (cipassword) = (sensitive)',
        '',
        '  # VM/pve2/101(db) will be updated, shut down and started again (disruption: reboot)',
        '  # VM/db: config drift (memory, tags)',
        '  ~ VM/pve2/101(db)',
        '      ~ spec.memory (memory): "1024" -> "4096"',
        '      - spec.description (description) = "a | b"',
        '',
        '  # LXC/pve3/300 will be deleted (prune) (disruption: stop)',
        '  # owned by proxops, not in git',
        '  - LXC/pve3/300',
        '',
        'Anomalies (1; reported, never acted on):',
        '  ! VM/pve2/101(db): net1 exists on PVE but not in git [live-only-slot]',
        '',
        'Skipped (1):',
        '  VM/pve1/150(manual): no proxops tag [untagged]',
        '',
        'Pending in PVE until the next restart (1):',
        '  VM/pve2/101(db): cores (applied at next restart)',
        '',
        'Gaps (1; not modelled, see docs/GAPS.md):',
        '  VM/pve1/100(web) spec.extra: sent on create only',
        '',
        'Plan: 1 to create, 1 to update, 1 to delete; 1 object blocked: anomaly 1.',
        '',
      ].join('\n'),
    )
  })

  it('a safety snapshot: `+ snapshot <address>` before the changes that wait for it, counted on its own', () => {
    const base = fixturePlan()
    const update = base.actions[1]!
    const snapshot = {
      ...update,
      id: `${update.address}#snapshot`,
      type: 'snapshot' as const,
      reason:
        'VM/db: safety snapshot proxops-<UTC time> before shutdown-then-update; keeps the newest 3 proxops-* snapshots',
      diffs: [],
      disruption: 'none' as const,
      requests: [
        {
          call: 'snapshot' as const,
          node: 'pve2',
          guest: 'qemu' as const,
          vmid: 101,
          keep: 3,
          digest: 'd',
          mark: 'managed-by=proxops',
        },
      ],
    }
    const p = { ...base, actions: [snapshot, update] }
    const text = renderPlanText(p, paint(false))
    expect(text).toContain(
      [
        '  # VM/pve2/101(db) will get a safety snapshot first (the changes below wait for it)',
        '  # VM/db: safety snapshot proxops-<UTC time> before shutdown-then-update; keeps the newest 3 proxops-* snapshots',
        '  + snapshot VM/pve2/101(db)',
        '',
        '  # VM/pve2/101(db) will be updated, shut down and started again (disruption: reboot)',
      ].join('\n'),
    )
    expect(summaryLine(p)).toBe(
      'Plan: 0 to create, 1 to update, 0 to delete, 1 safety snapshot; 1 object blocked: anomaly 1.',
    )
  })

  it("what lives on a guest reads as its kind says: an HA resource's create and removal, a pool join (describeAction)", () => {
    const on = (kind: Action['kind'], type: Action['type'], id: string): Action => ({
      ...(ACTIONS[0] as Action),
      id: `VM/pve1/100(web)#${id}`,
      kind,
      type,
      diffs: [],
    })
    const actions = [on('HA', 'create', 'ha-create'), on('Pool', 'join', 'pool'), on('HA', 'delete', 'ha-delete')]
    const text = renderPlanText({ ...fixturePlan(actions), anomalies: [], skips: [], pending: [] }, paint(false))
    expect(text).toContain('  # VM/pve1/100(web) will become an HA resource\n')
    expect(text).toContain('  # VM/pve1/100(web) will join its pool\n')
    expect(text).toContain('  # VM/pve1/100(web) will stop being an HA resource (its resource is removed)\n')
    expect(actions.map((a) => symbolOf(a))).toEqual(['+', '~', '-'])
    expect(text).toContain('Plan: 1 to create, 1 to update, 1 to delete.')
    expect(renderPlanMarkdown(fixturePlan(actions))).toContain('| + | `VM/pve1/100(web)` | HA create | none |')
  })

  it('the header says when the plan comes from a dirty work tree', () => {
    const dirty = { ...fixturePlan(), commit: '0123456789abcdef0123456789abcdef01234567-dirty-aabbccddeeff' }
    expect(renderPlanText(dirty, paint(false)).split('\n')[0]).toBe(
      'Cluster homelab at 0123456789ab + uncommitted changes (dirty work tree)',
    )
    expect(renderPlanText(fixturePlan(), paint(false)).split('\n')[0]).toBe('Cluster homelab at 0123456789ab')
  })

  it('says No changes. for an empty plan and colours only when asked', () => {
    const empty = { ...fixturePlan([]), anomalies: [], skips: [], pending: [], gaps: [] }
    expect(renderPlanText(empty, paint(false))).toBe(
      'Cluster homelab at 0123456789ab\n\nNo changes. PVE matches git.\n',
    )
    expect(renderPlanText(fixturePlan(), paint(true))).toContain('\u001b[32m  + VM/pve1/100(web)\u001b[39m')
    expect(renderPlanText(fixturePlan(), paint(false))).not.toContain('\u001b[')
    expect(useColor(true, {}, false)).toBe(true)
    expect(useColor(true, { NO_COLOR: '1' }, false)).toBe(false)
    expect(useColor(true, { NO_COLOR: '' }, false)).toBe(true)
    expect(useColor(true, {}, true)).toBe(false)
    expect(useColor(false, {}, false)).toBe(false)
    expect(useColor(false, { FORCE_COLOR: '1' }, false)).toBe(true)
    expect(useColor(true, { FORCE_COLOR: '0' }, false)).toBe(false)
    expect(useColor(false, { FORCE_COLOR: '1', NO_COLOR: '1' }, false)).toBe(false)
    expect(useColor(false, { FORCE_COLOR: '1' }, true)).toBe(false)
    expect(useColor(true, { TERM: 'dumb' }, false)).toBe(false)
    expect(useColor(true, { TERM: 'xterm-256color' }, false)).toBe(true)
  })

  test.prop(
    [
      fc.array(
        fc.constantFrom(
          ...ACTIONS.map((a) => a.type),
          'clone',
          'download',
          'resize',
          'start',
          'stop',
          'restart',
          'mark-template',
          'update',
        ),
        { maxLength: 30 },
      ),
    ],
    {
      numRuns: 200,
    },
  )('the summary line counts every action exactly once', (types) => {
    const actions = types.map((type, i) => ({ ...(ACTIONS[0] as (typeof ACTIONS)[0]), id: `a${i}`, type }))
    const c = countActions(actions)
    expect(c.create + c.update + c.delete).toBe(actions.length)
    expect(c.delete).toBe(actions.filter((a) => symbolOf(a) === '-').length)
    const clean = { ...fixturePlan(actions), anomalies: [], skips: [], pending: [] }
    expect(summaryLine(clean)).toBe(
      actions.length === 0
        ? 'No changes. PVE matches git.'
        : `Plan: ${c.create} to create, ${c.update} to update, ${c.delete} to delete.`,
    )
    // the fixture's anomaly blocks one object: never "No changes" then
    const blocked = summaryLine(fixturePlan(actions))
    expect(blocked).toBe(
      actions.length === 0
        ? 'No actions possible; 1 object blocked: anomaly 1.'
        : `Plan: ${c.create} to create, ${c.update} to update, ${c.delete} to delete; 1 object blocked: anomaly 1.`,
    )
  })

  test.prop([fc.option(fc.string(), { nil: undefined }), fc.option(fc.string(), { nil: undefined })], { numRuns: 200 })(
    'a field diff line is one line and shows both sides',
    (before, after) => {
      const line = diffLine({
        field: 'spec.x',
        key: 'x',
        ...(before !== undefined ? { before } : {}),
        ...(after !== undefined ? { after } : {}),
      })
      expect(line.text).not.toContain('\n')
      if (before !== undefined && after !== undefined) expect(line.symbol).toBe('~')
    },
  )
})

describe('markdown renderer', () => {
  it('renders a PR comment with a table, escaped cells and a diff block', () => {
    const md = renderPlanMarkdown(fixturePlan())
    expect(md).toContain('### ProxOps plan for cluster `homelab`')
    expect(md).toContain('**Plan: 1 to create, 1 to update, 1 to delete; 1 object blocked: anomaly 1.**')
    expect(md).toContain(
      '| ~ | `VM/pve2/101(db)` | shutdown-then-update | reboot | VM/db: config drift (memory, tags) |',
    )
    expect(md).toContain('```diff\n+ VM/pve1/100(web)\n+   spec.memory (memory) = "2048"')
    expect(md).toContain('-   spec.description (description) = "a | b"')
    expect(md).toContain('**Anomalies (1)**')
    expect(md.endsWith('\n')).toBe(true)
  })
})

describe('canonical JSON', () => {
  test.prop([fc.jsonValue()], { numRuns: 200 })('is independent of key insertion order', (value) => {
    const reversed = JSON.parse(JSON.stringify(value), function (this: unknown, _k, v: unknown) {
      if (v && typeof v === 'object' && !Array.isArray(v)) return Object.fromEntries(Object.entries(v).reverse())
      return v
    }) as unknown
    expect(canonicalJson(reversed)).toBe(canonicalJson(value))
  })
})

describe('renderers over arbitrary plans', () => {
  const action = fc.record({
    type: fc.constantFrom(
      'create',
      'clone',
      'download',
      'update',
      'shutdown-then-update',
      'resize',
      'restart',
      'start',
      'stop',
      'mark-template',
      'delete' as const,
    ),
    vmid: fc.integer({ min: 100, max: 999_999 }),
    reason: fc.string({ maxLength: 40 }),
    disruption: fc.constantFrom('none', 'hotplug', 'reboot', 'stop' as const),
    diffs: fc.array(
      fc.record({
        field: fc.string({ minLength: 1, maxLength: 12 }),
        key: fc.string({ maxLength: 8 }),
        before: fc.option(fc.string(), { nil: undefined }),
        after: fc.option(fc.string(), { nil: undefined }),
      }),
      { maxLength: 4 },
    ),
  })
  test.prop([fc.uniqueArray(action, { selector: (a) => a.vmid, maxLength: 12 })], { numRuns: 200 })(
    'every action appears once with its symbol, in plan order; no colour unless asked; markdown has one row per action',
    (drafts) => {
      const actions = drafts.map((d) => ({
        ...(ACTIONS[0] as (typeof ACTIONS)[0]),
        ...d,
        id: `VM/pve1/${d.vmid}#${d.type}`,
        address: `VM/pve1/${d.vmid}`,
        diffs: d.diffs.map((x) => ({
          field: x.field,
          key: x.key,
          ...(x.before !== undefined ? { before: x.before } : {}),
          ...(x.after !== undefined ? { after: x.after } : {}),
        })),
      }))
      const plan = { ...fixturePlan(actions), anomalies: [], skips: [], pending: [], gaps: [] }
      const text = renderPlanText(plan, paint(false))
      expect(text).not.toContain('\u001b[')
      let at = 0
      for (const a of actions) {
        const line = `  ${symbolOf(a)} ${a.address}\n`
        const found = text.indexOf(line, at)
        expect(found).toBeGreaterThanOrEqual(at)
        at = found + line.length
      }
      expect(text.trimEnd().split('\n').at(-1)).toBe(summaryLine(plan))
      // free text never forges a line: every action block line starts as the renderer writes it
      const lines = text.split('\n')
      expect(lines.filter((l) => /^ {2}[+~-] /.test(l))).toHaveLength(actions.length)
      const rows = renderPlanMarkdown(plan)
        .split('\n')
        .filter((l) => /^\| [+~-] \|/.test(l))
      expect(rows).toHaveLength(actions.length)
    },
  )
})
