/**
 * The status page in a real browser: Debian's chromium driven by playwright-core (the system browser, no
 * download), over the built daemon reconciling the simulator. What a person sees in the converged, blocked and
 * failed states: the page title, the cluster's word, each object's word and colour, the masked PVE error. The
 * daemon asks for basic auth (PROXOPS_HTTP_BASIC_AUTH), which the browser answers. Screenshots go to a temporary
 * directory, named on stdout (PROXOPS_SCREENSHOT_DIR to choose it), never into the repository.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import type { Simulator } from '@proxops/pve-sim'
import type { PveClient } from '@proxops/pve-client'
import { CHROMIUM, describeWith } from '../support/external-tool.js'
import {
  adminClient,
  baseEnv,
  freePort,
  git,
  httpGet,
  makeRepo,
  start,
  startLab,
  vmManifest,
  waitFor,
  transcriptCanaries,
} from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 90_000 })

/** a secret PVE echoes back in an error, holding the characters HTML escaping changes */
const SECRET = `tok&"<CANARY-page>'91`
const HTML_SPELLINGS = [
  SECRET,
  SECRET.replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;'),
  SECRET.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`),
]
const AUTH = { username: 'ops', password: 'page-pw-CANARY-3e1' }
const POOL = `apiVersion: proxops/v1alpha1\nkind: Pool\nmetadata:\n  name: web\nspec:\n  id: web-tier\n  comment: web tier\n`

describeWith(CHROMIUM, 'the status page in chromium', () => {
  let sim: Simulator
  let admin: PveClient
  let repo: string
  let data: string
  let shots: string
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let port: number
  let daemon: ReturnType<typeof start>

  const commit = (file: string, text: string, message: string) => {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true })
    writeFileSync(path.join(repo, file), text)
    const listed = readFileSync(path.join(repo, 'clusters/lab/resources.yaml'), 'utf8')
    if (!listed.includes(file))
      writeFileSync(path.join(repo, 'clusters/lab/resources.yaml'), `${listed}  - ../../${file}\n`)
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', message)
  }

  /** loads the page until its title names `state`, then returns what a person reads */
  const seen = async (state: string, shot: string) => {
    let title = ''
    await waitFor(
      async () => {
        await page.goto(`http://127.0.0.1:${port}/`)
        title = await page.title()
        return title === `lab: ${state} · ProxOps` ? true : undefined
      },
      60_000,
      500,
    ).catch(async (error: unknown) => {
      await page.screenshot({ path: path.join(shots, `${shot}-timeout.png`), fullPage: true })
      throw new Error(
        `the title stayed "${title}" (want lab: ${state}): ${String(error)}\n${git(repo, 'log', '--oneline')}\n${daemon.stderrSoFar().split('\n').slice(-5).join('\n')}\n${JSON.stringify(sim.stats.requests.filter((r) => r.method !== 'GET').slice(-10))}`,
      )
    })
    await page.screenshot({ path: path.join(shots, `${shot}.png`), fullPage: true })
    return page
  }
  /** the word and background colour of an object's state, as rendered */
  const badgeOf = async (name: string) => {
    const badge = page.locator('table.objects tr', { has: page.locator(`td:text-is("${name}")`) }).locator('.badge')
    return {
      word: await badge.innerText(),
      // runs in the page, where `window` is the browser's
      background: await badge.evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).backgroundColor),
    }
  }

  beforeAll(async () => {
    sim = await startLab()
    admin = adminClient(sim)
    repo = await makeRepo(sim, { manifests: { 'vm/lab/app.yaml': vmManifest('app', 100) } })
    data = mkdtempSync(path.join(os.tmpdir(), 'proxops-data-'))
    shots = process.env.PROXOPS_SCREENSHOT_DIR ?? mkdtempSync(path.join(os.tmpdir(), 'proxops-status-page-'))
    mkdirSync(shots, { recursive: true })
    console.info(`status page screenshots: ${shots}`)
    port = await freePort()
    daemon = start(['run', '--listen', `127.0.0.1:${port}`, '--git-poll-sec', '1', '--data-dir', data], {
      cwd: repo,
      // SECRET is a credential the daemon holds (unused in local mode), so its redactor knows it
      env: baseEnv(repo, { PROXOPS_HTTP_BASIC_AUTH: `${AUTH.username}:${AUTH.password}`, PROXOPS_GIT_TOKEN: SECRET }),
    })
    // root in a container: chromium's sandbox needs user namespaces it may not have
    browser = await chromium.launch({ executablePath: CHROMIUM.command, args: ['--no-sandbox'] })
    context = await browser.newContext({ httpCredentials: AUTH, viewport: { width: 1100, height: 800 } })
    page = await context.newPage()
  })
  afterAll(async () => {
    await browser?.close()
    daemon?.child.kill('SIGTERM')
    await daemon?.done
    await admin?.close()
    await sim?.close()
    rmSync(repo, { recursive: true, force: true })
    rmSync(data, { recursive: true, force: true })
  })

  it('asks for credentials: no page without them', async () => {
    const r = await waitFor(() => httpGet(port, '/'), 30_000)
    expect(r.status).toBe(401)
    expect(r.headers.get('www-authenticate')).toMatch(/^Basic realm="proxops"/)
  })

  it('converged: the title, the cluster word, the object green with its word, the commit', async () => {
    await seen('converged', 'converged')
    await waitFor(async () => ((await badgeOf('app')).word === 'converged' ? true : undefined), 30_000, 250)
    await page.reload()
    expect(await page.locator('h2').first().innerText()).toBe('Cluster lab converged')
    expect(await badgeOf('app')).toEqual({ word: 'converged', background: 'rgb(218, 251, 225)' })
    const head = git(repo, 'rev-parse', 'HEAD').trim()
    expect(await page.locator('header code').getAttribute('title')).toBe(head)
    expect(await page.locator('header code').innerText()).toBe(head.slice(0, 12))
    // the first cycle created the guest: the history shows it, the newest first
    const results = await page.locator('table.history .badge').allInnerTexts()
    expect(results.length).toBeGreaterThanOrEqual(2)
    expect(results[0]).toBe('converged')
  })

  it('blocked: a Pool held by another cluster entry, amber, with the planner reason', async () => {
    await admin.createPool({ poolid: 'web-tier', comment: 'managed-by=proxops.edge web tier' })
    commit('pool/lab/web.yaml', POOL, 'a pool another entry holds')
    await seen('blocked', 'blocked')
    expect(await badgeOf('web')).toEqual({ word: 'blocked', background: 'rgb(255, 248, 197)' })
    const row = await page.locator('table.objects tr', { has: page.locator('td:text-is("web")') }).innerText()
    expect(row).toMatch(/anomaly: pool web-tier carries another cluster entry's marker/)
    expect(await page.locator('.alert.warn').innerText()).toBe('Blocked by reason: anomaly 1')
  })

  it('failed: PVE refuses a write; the error shows, the secret in it does not', async () => {
    // PVE's answer to the write repeats a credential (a proxy in front of PVE, a plugin's message)
    // a running or stopped VM's config is written with POST (qemu-server update_vm_async)
    sim.control.failNext({
      method: 'POST',
      path: /\/qemu\/100\/config$/,
      status: 500,
      message: `refused: ${SECRET}`,
      count: 1000,
    })
    try {
      commit('vm/lab/app.yaml', vmManifest('app', 100, { memory: '768MiB' }), 'app: more memory')
      await seen('incomplete', 'failed')
      expect(await badgeOf('app')).toEqual({ word: 'failed', background: 'rgb(255, 235, 233)' })
      const row = await page.locator('table.objects tr', { has: page.locator('td:text-is("app")') }).innerText()
      expect(row).toMatch(/update failed: POST .*: 500 refused: \(sensitive\)$/)
      const action = await page.locator('table.actions tr', { hasText: 'VM/pve1/100(app)' }).innerText()
      expect(action).toMatch(/update\s+VM\/pve1\/100\(app\)\s+none\s+failed/)
      // what the browser was sent and what it shows
      const served = await context.request.get(`http://127.0.0.1:${port}/`)
      for (const text of [await served.text(), await page.content(), await page.innerText('body')])
        for (const spelling of [...HTML_SPELLINGS, 'CANARY']) expect(text).not.toContain(spelling)
    } finally {
      sim.control.clearFaults()
    }
  })

  it('aborted: PVE refuses the token; the last known objects stay, marked stale with when, and nothing says ready', async () => {
    sim.control.revokeToken()
    try {
      await seen('aborted', 'aborted')
      expect(await page.locator('.alert.bad').first().innerText()).toMatch(/^Aborted: .*401/)
      expect(await page.locator('p.stale').innerText()).toMatch(
        /^Stale: this cycle read nothing; the objects as the cycle of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \([\d.]+ s ago, commit [0-9a-f]{12}\) read them\.$/,
      )
      // the rows the last read saw, each with its word, in grey
      const app = await badgeOf('app')
      expect(['failed', 'changed', 'converged']).toContain(app.word)
      expect(app.background).toBe('rgb(234, 238, 242)')
      expect((await badgeOf('web')).word).toBe('blocked')
      expect(await page.locator('#readiness').innerText()).toBe('last cycle failed: lab')
      expect(await page.locator('header').innerText()).not.toMatch(/\bready\b/)
    } finally {
      sim.control.restoreToken()
    }
  })

  it('no canary in any output of the daemon', () => {
    expect(transcriptCanaries()).toEqual([])
    expect(daemon.stderrSoFar()).not.toContain('CANARY')
  })
})
