/**
 * docs/operations.md uses the files under deploy/, not copies that drift: the systemd unit it shows is the file as
 * it is, the container commands are the Containerfile's header, the dashboard, the rules and their tests are
 * linked, and no alert rule is written out in the page any more.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../support/exported-metrics.js'

const doc = readFileSync(new URL('docs/operations.md', repoRoot), 'utf8')
const file = (p: string) => readFileSync(new URL(p, repoRoot), 'utf8')

/** the fenced block right after the HTML comment that starts with `marker` */
function blockAfter(marker: string): string {
  const at = doc.indexOf(`<!-- ${marker}`)
  expect(at, marker).toBeGreaterThan(-1)
  const m = /-->\n```\w*\n([\s\S]*?)```\n/.exec(doc.slice(at))
  return m?.[1] ?? ''
}

describe('docs/operations.md and deploy/', () => {
  it('shows the systemd unit exactly as deploy/systemd/proxops.service holds it', () => {
    expect(blockAfter('deploy/systemd/proxops.service')).toBe(file('deploy/systemd/proxops.service'))
  })

  it("shows the container's build and run commands as the Containerfile's header says them", () => {
    const header = file('deploy/container/Containerfile')
      .split('\n')
      .filter((l) => /^# {3}/.test(l))
      .map((l) => l.slice(4))
    expect(header.length).toBeGreaterThan(2)
    expect(blockAfter('the build and run lines of deploy/container/Containerfile')).toBe(`${header.join('\n')}\n`)
  })

  it('links the dashboard, the rules, their tests and the Containerfile, and writes out no rule of its own', () => {
    for (const p of [
      'deploy/grafana/proxops.json',
      'deploy/prometheus/proxops.rules.yml',
      'deploy/prometheus/proxops.rules.test.yml',
      'deploy/container/Containerfile',
      'deploy/systemd/proxops.service',
    ])
      expect(doc).toContain(`](../${p})`)
    expect(doc).not.toMatch(/^\s*- alert: /m)
    expect(doc).toContain('](status-page.png)')
  })

  it('shows a small PNG of the status page', () => {
    const png = readFileSync(new URL('docs/status-page.png', repoRoot))
    expect(png.subarray(1, 4).toString()).toBe('PNG')
    expect(png.length).toBeLessThan(100_000)
  })
})
