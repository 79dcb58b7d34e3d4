/**
 * The status page's layout in a real browser (Debian's chromium through playwright-core): at common widths every
 * name and address stays on one line, however long the error beside it, and nothing scrolls sideways. The page is
 * the renderer's HTML for a realistic cluster (node `pve-node-01`, addresses like
 * `VM/pve-node-01/1001(web-frontend-01)`, PVE errors of a few hundred characters), the bytes the daemon serves.
 * Screenshots go to a temporary directory, named on stdout (PROXOPS_SCREENSHOT_DIR to choose it).
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { mkdirSync, mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { Redactor } from '../../src/redact.js'
import { renderStatusPage } from '../../src/daemon/status-page.js'
import { cycle, documentOf, row } from '../../src/daemon/status-page.test-support.js'
import type { ClusterCycle, ObjectStatus } from '../../src/status-model.js'
import { CHROMIUM, describeWith } from '../support/external-tool.js'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 })

const NODE = 'pve-node-01'
const ERROR =
  'update failed: POST /api2/json/nodes/pve-node-01/qemu/1001/config: 500 unable to parse drive options ' +
  "'local-lvm:vm-1001-disk-0,discard=on,iothread=1,size=32G,ssd=1' - storage 'local-lvm' does not exist on node " +
  'pve-node-01 (check /etc/pve/storage.cfg and the node restriction of the storage)'

/** a cluster as a production estate names it: long guest names, every row state, long reasons */
function estate(): ClusterCycle {
  const guests: [string, number, Partial<ObjectStatus>][] = [
    ['web-frontend-01', 1001, { state: 'failed', action: 'update', error: ERROR }],
    ['web-frontend-02', 1002, { state: 'converged', action: 'update', reason: 'drift (memory, cores)' }],
    ['postgres-primary-eu-west-01', 1101, { state: 'converged' }],
    ['kafka-broker-03.internal', 1203, { state: 'blocked', blocked: 'unknown', reason: `config unreadable: ${ERROR}` }],
    ['monitoring-grafana-prod', 1301, { state: 'drift', action: 'update', reason: 'drift (net0: bridge vmbr0)' }],
  ]
  const objects = [
    ...guests.map(([name, vmid, o]) => row({ name, vmid, node: NODE, state: 'converged', ...o })),
    row({ kind: 'LXC', name: 'VM/pve-node-01/1999(legacy-batch-runner)', vmid: 1999, node: NODE, state: 'pruned' }),
    row({
      kind: 'Pool',
      name: 'production-web-tier',
      node: '-',
      state: 'blocked',
      blocked: 'anomaly',
      reason: "pool production-web-tier carries another cluster entry's marker (managed-by=proxops.staging-eu)",
      unmanaged: [{ key: 'hookscript', executes: 'a hook script: local:snippets/backup-hook.pl' }],
    }),
  ]
  return cycle({
    cluster: 'production-eu-west',
    result: 'incomplete',
    actions: { planned: 3, ok: 2, failed: 1, skipped: 0 },
    objects,
    plannedActions: [
      {
        address: `VM/${NODE}/1001(web-frontend-01)`,
        kind: 'VM',
        type: 'update',
        disruption: 'reboot',
        reason: 'drift (scsi0: discard, iothread; memory 8192 -> 16384)',
        result: 'failed',
        detail: ERROR,
      },
      {
        address: `VM/${NODE}/1002(web-frontend-02)`,
        kind: 'VM',
        type: 'update',
        disruption: 'hotplug',
        reason: 'drift (memory, cores)',
        result: 'ok',
      },
      {
        address: `LXC/${NODE}/1999(legacy-batch-runner)`,
        kind: 'LXC',
        type: 'delete',
        disruption: 'stop',
        reason: 'not in git (managed-by=proxops.production-eu-west)',
        result: 'ok',
      },
    ],
    findings: [
      { type: 'gap', code: 'spec.cloud-init.user', address: `VM/${NODE}/1001(web-frontend-01)`, message: ERROR },
    ],
  })
}

describeWith(CHROMIUM, 'the status page layout in chromium', () => {
  let browser: Browser
  let page: Page
  let shots: string

  beforeAll(async () => {
    shots = process.env.PROXOPS_SCREENSHOT_DIR ?? mkdtempSync(path.join(os.tmpdir(), 'proxops-status-layout-'))
    mkdirSync(shots, { recursive: true })
    console.info(`status page layout screenshots: ${shots}`)
    // root in a container: chromium's sandbox needs user namespaces it may not have
    browser = await chromium.launch({ executablePath: CHROMIUM.command, args: ['--no-sandbox'] })
    page = await browser.newPage()
  })
  afterAll(async () => {
    await browser?.close()
  })

  /** per name or address cell: its text and how many lines the browser laid it out on, with each line's height */
  const nameLines = () =>
    page.$$eval('td.name', (cells) =>
      cells.map((cell) => {
        const range = cell.ownerDocument.createRange()
        range.selectNodeContents(cell)
        const lines = [...range.getClientRects()]
        return { text: cell.textContent ?? '', lines: lines.length, height: lines[0]?.height ?? 0 }
      }),
    )
  /** the height of one line of table text: the one-word kind cell of the first row */
  const oneLine = () =>
    page.$eval('table.objects td', (cell) => {
      const range = cell.ownerDocument.createRange()
      range.selectNodeContents(cell)
      return range.getBoundingClientRect().height
    })

  for (const width of [1024, 1400])
    for (const variant of ['live', 'stale'] as const)
      it(`${width} px, ${variant}: every name and address on one line, nothing wider than the window`, async () => {
        const read = estate()
        const doc =
          variant === 'live'
            ? documentOf([read])
            : documentOf(
                [
                  read,
                  cycle({
                    cluster: read.cluster,
                    startedAt: '2026-01-01T00:00:10.000Z',
                    finishedAt: '2026-01-01T00:00:11.000Z',
                    result: 'aborted',
                    abortReason: `pve inventory read failed for cluster production-eu-west: GET /api2/json/cluster/resources: connect ECONNREFUSED 10.20.30.40:8006`,
                  }),
                ],
                { lastRead: new Map([[read.cluster, read]]) },
              )
        await page.setViewportSize({ width, height: 900 })
        await page.setContent(renderStatusPage(doc, new Redactor()))
        await page.screenshot({ path: path.join(shots, `layout-${width}-${variant}.png`), fullPage: true })

        const cells = await nameLines()
        // the objects' names, and the plan's addresses when the cycle has a plan
        expect(cells.map((c) => c.text)).toEqual(
          expect.arrayContaining([
            'web-frontend-01',
            'VM/pve-node-01/1999(legacy-batch-runner)',
            'production-web-tier',
          ]),
        )
        if (variant === 'live') expect(cells.map((c) => c.text)).toContain(`VM/${NODE}/1001(web-frontend-01)`)
        const line = await oneLine()
        expect(line).toBeGreaterThan(10)
        for (const c of cells) expect(c, c.text).toEqual({ text: c.text, lines: 1, height: line })
        // the long errors wrapped instead: the page is no wider than the window
        const overflow = await page.$eval('html', (html) => ({ scroll: html.scrollWidth, client: html.clientWidth }))
        expect(overflow.scroll).toBeLessThanOrEqual(overflow.client)
        if (variant === 'stale')
          expect(await page.locator('p.stale').innerText()).toMatch(/^Stale: this cycle read nothing/)
      })
})
