import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { Redactor } from '../redact.js'
import { STATUS_PAGE_TEMPLATE, objectBadge, pageTitle, readinessBadge, renderStatusPage } from './status-page.js'
import { COMMIT, cycle, documentOf, mixedCycle, row } from './status-page.test-support.js'

describe('the status page', () => {
  it('shows each cluster, its last cycle, each object with a word and a colour, the plan, findings and history', () => {
    const html = renderStatusPage(
      documentOf([cycle(), mixedCycle(), cycle({ cluster: 'edge', result: 'converged' })]),
      new Redactor(),
    )
    expect(html).toMatch(/<title>incomplete · edge: converged, lab: incomplete · ProxOps<\/title>/)
    expect(html).toContain('<meta http-equiv="refresh" content="30">')
    expect(html).toContain(`title="${COMMIT}">0123456789ab</code>`)
    expect(html).toMatch(/took 2\.5 s/)
    // the document shares this object with /convergedz's part: it is printed, not cut as a cycle
    expect(html).toContain('Blocked by reason: anomaly 1, unknown 1')
    for (const [name, word, tone] of [
      ['web', 'converged', 'ok'],
      ['app', 'changed', 'changed'],
      ['db', 'failed', 'bad'],
      ['cache', 'unknown', 'muted'],
      ['web-tier', 'blocked', 'warn'],
    ])
      expect(html).toMatch(new RegExp(`<td class="name">${name}</td>.*<span class="badge ${tone}">${word}</span>`))
    expect(html).toContain('<td class="detail">PVE 500: no-secret-here refused</td>')
    expect(html).toContain('anomaly: pool web-tier carries another cluster entry&#39;s marker')
    expect(html).toContain('unmanaged, executes: hookscript: a hook script')
    expect(html).toContain('unmanaged on PVE, not in git: cpulimit')
    expect(html).toMatch(
      /<td>update<\/td><td class="name">VM\/pve1\/102\(db\)<\/td><td>reboot<\/td><td><span class="badge bad">failed/,
    )
    expect(html).toContain('<strong>gap spec.extra</strong>')
    // two cycles of lab, the newest first
    const history = html.split('id="cluster-lab"')[1]!.split('<table class="history">')[1]!
    expect([...history.matchAll(/<span class="badge \w+">(\w+)<\/span>/g)].map((m) => m[1])).toEqual([
      'incomplete',
      'converged',
    ])
    expect(html).not.toMatch(/<script/i)
  })

  it('names the state in the title, and says so before the first cycle', () => {
    expect(pageTitle([{ cluster: 'lab', result: 'blocked' }])).toBe('lab: blocked · ProxOps')
    expect(pageTitle([{ cluster: 'lab', result: null }])).toBe('lab: no cycle yet · ProxOps')
    const doc = documentOf([], { clusters: ['lab'] })
    expect(renderStatusPage(doc, new Redactor())).toContain('No cycle has finished yet.')
  })

  it('says that uncommitted changes are not applied, naming them, in the page and in /status (work_tree)', () => {
    const paths = Array.from({ length: 22 }, (_, i) => `vm/lab/v${i}.yaml`)
    const doc = documentOf([cycle()], { uncommitted: paths })
    expect(doc.work_tree).toEqual({ dirty: true, applied: false, paths: paths.slice(0, 20), more: 2 })
    const html = renderStatusPage(doc, new Redactor())
    expect(html).toMatch(
      /id="uncommitted">Uncommitted changes in the work tree are not applied \(the daemon reconciles commit <code>0123456789ab<\/code>\): vm\/lab\/v0\.yaml, .* and 2 more</,
    )
    expect(documentOf([cycle()], { uncommitted: [] }).work_tree).toMatchObject({ dirty: false })
    expect(renderStatusPage(documentOf([cycle()], { uncommitted: [] }), new Redactor())).not.toContain('uncommitted')
    // URL mode has no work tree
    expect(documentOf([cycle()]).work_tree).toBeNull()
  })

  it('every object state has a word of its own', () => {
    const words = (['converged', 'drift', 'in_progress', 'failed', 'skipped', 'pruned', 'blocked'] as const).map(
      (state) => objectBadge(row({ name: 'x', state })).word,
    )
    expect(new Set(words).size).toBe(words.length)
  })

  it('after an aborted cycle: the objects the last read saw, marked stale with when, each word kept and greyed', () => {
    const read = mixedCycle()
    const aborted = cycle({
      startedAt: '2026-01-01T00:00:10.000Z',
      finishedAt: '2026-01-01T00:00:11.000Z',
      result: 'aborted',
      abortReason: 'GET /version: connect ECONNREFUSED',
    })
    const doc = documentOf([read, aborted], { lastRead: new Map([['lab', read]]) })
    expect(doc.clusters[0]!.lastKnown).toEqual({ readAt: read.finishedAt, commit: COMMIT, objects: read.objects })
    const html = renderStatusPage(doc, new Redactor())
    expect(html).not.toContain('No objects.')
    expect(html).toContain(
      'Stale: this cycle read nothing; the objects as the cycle of 2026-01-01 00:00:02 UTC (10 s ago, commit',
    )
    expect(html).toContain('<table class="objects stale">')
    for (const [name, word] of [
      ['web', 'converged'],
      ['db', 'failed'],
      ['web-tier', 'blocked'],
    ])
      expect(html).toMatch(new RegExp(`<td class="name">${name}</td>.*<span class="badge muted">${word}</span>`))
    expect(html).toContain('Aborted: GET /version: connect ECONNREFUSED')
    // the plan of the aborted cycle is its own (none), not the stale one's
    expect(html).toContain('Nothing to do.')
  })

  it('an aborted cycle with no earlier read, or a cycle that read PVE, carries no last known objects', () => {
    const aborted = cycle({ result: 'aborted', abortReason: 'unreachable' })
    expect(documentOf([aborted]).clusters[0]!.lastKnown).toBeUndefined()
    expect(renderStatusPage(documentOf([aborted]), new Redactor())).toContain('No objects.')
    const read = mixedCycle()
    const doc = documentOf([read, cycle()], { lastRead: new Map([['lab', read]]) })
    expect(doc.clusters[0]!.lastKnown).toBeUndefined()
    expect(renderStatusPage(doc, new Redactor())).not.toContain('stale')
  })

  it('never says ready beside a failed cycle: the clusters whose last cycle aborted or failed actions are named', () => {
    // /readyz is still ready: its last success is within 3 intervals
    const failedDoc = documentOf([cycle(), mixedCycle(), cycle({ cluster: 'edge', result: 'aborted' })])
    expect(failedDoc.ready.ready).toBe(true)
    expect(readinessBadge(failedDoc)).toEqual({ word: 'last cycle failed: edge, lab', tone: 'bad' })
    const html = renderStatusPage(failedDoc, new Redactor())
    expect(html).toContain('<span id="readiness" class="bad-text">last cycle failed: edge, lab</span>')
    expect(html).not.toMatch(/>ready</)
    expect(readinessBadge(documentOf([cycle({ result: 'blocked' })]))).toEqual({ word: 'ready', tone: 'ok' })
    expect(readinessBadge(documentOf([], { clusters: ['lab'] }))).toEqual({
      word: 'not ready (lab: no cycle has completed yet)',
      tone: 'warn',
    })
  })

  it('is the same bytes for the same document', () => {
    const doc = documentOf([mixedCycle()])
    expect(renderStatusPage(doc, new Redactor())).toBe(renderStatusPage(doc, new Redactor()))
  })

  it('prints every value through the escaper: the template has no raw output tag', () => {
    expect(STATUS_PAGE_TEMPLATE).not.toContain('<%~')
    const html = renderStatusPage(documentOf([mixedCycle('<img src=x onerror=alert(1)>')]), new Redactor())
    expect(html).not.toContain('<img')
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;')
  })
})

/** the ways a secret can stand in HTML text: as it is, and escaped with named or numeric entities */
function htmlSpellings(secret: string): string[] {
  const named = secret
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
  const numeric = secret.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  return [...new Set([secret, named, numeric])]
}

describe('secrets on the status page (canaries)', () => {
  const CANARY = 'pw&"CANARY<page>\'1'

  it('masks a secret holding &, ", <, > and \' wherever PVE echoed it: errors, reasons, findings, aborts', () => {
    const aborted = cycle({ cluster: 'edge', result: 'aborted', abortReason: `401: token ${CANARY} rejected` })
    const html = renderStatusPage(
      documentOf([mixedCycle(CANARY), aborted], { commit: COMMIT }),
      new Redactor().add(CANARY),
    )
    for (const spelling of htmlSpellings(CANARY)) expect(html).not.toContain(spelling)
    expect(html).not.toContain('CANARY')
    expect(html).toContain('PVE 500: (sensitive) refused')
    expect(html).toContain('401: token (sensitive) rejected')
  })

  it('why the order matters: masking the escaped HTML would miss it', () => {
    const escapedOnly = new Redactor()
      .add(CANARY)
      .text(renderStatusPage(documentOf([mixedCycle(CANARY)]), new Redactor()))
    expect(htmlSpellings(CANARY).some((s) => escapedOnly.includes(s))).toBe(true)
  })

  test.prop(
    [
      fc
        .tuple(fc.string({ minLength: 6, maxLength: 16 }), fc.constantFrom('&', '"', '<', '>', "'"), fc.string())
        .map(([a, special, b]) => `${a}${special}${b}`)
        .filter((s) => s.trim().length >= 8),
      fc.string({ maxLength: 12 }),
    ],
    { numRuns: 150 },
  )('a registered secret never reaches the page in any spelling', (secret, around) => {
    const html = renderStatusPage(documentOf([mixedCycle(`${around}${secret}${around}`)]), new Redactor().add(secret))
    for (const spelling of htmlSpellings(secret.trim())) expect(html).not.toContain(spelling)
  })
})
