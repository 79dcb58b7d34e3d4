/** apply on a terminal (in process, with a fake TTY): the plan, the question, progress lines, colour. */
import { beforeAll, describe, expect, it } from 'vitest'
import { PassThrough } from 'node:stream'
import { main } from '../../src/cli.js'
import { AGE_KEY_FILE, findCanaries, homeFor, useLab, commitManifests, vmManifests } from './harness.js'

const lab = useLab()
let repo: string
beforeAll(async () => {
  repo = await lab.repo()
})

function tty(): PassThrough & { isTTY: boolean; text: () => string } {
  const stream = Object.assign(new PassThrough(), { isTTY: true })
  let text = ''
  stream.on('data', (c: Buffer) => (text += c.toString()))
  return Object.assign(stream, { text: () => text })
}

/** `watch` sees stderr as it grows (to release a held task once the screen showed it) */
async function apply(
  answer: boolean,
  args: string[] = [],
  watch?: (stderr: string) => void,
): Promise<{ code: number; stdout: string; stderr: string; questions: string[] }> {
  const stdout = tty()
  const stderr = tty()
  if (watch) stderr.on('data', () => watch(stderr.text()))
  const questions: string[] = []
  const code = await main(['apply', ...args], {
    cwd: repo,
    env: { HOME: homeFor(repo), SOPS_AGE_KEY_FILE: AGE_KEY_FILE, PATH: process.env.PATH },
    io: {
      stdout,
      stderr,
      stdinIsTty: true,
      confirm: async (q) => {
        questions.push(q)
        return answer
      },
    },
  })
  return { code, stdout: stdout.text(), stderr: stderr.text(), questions }
}

describe('apply on a terminal', () => {
  it('shows the plan and asks; "no" changes nothing and exits 1', async () => {
    const r = await apply(false)
    expect(r.code).toBe(1)
    expect(r.questions).toEqual(["Apply these 2 action(s) to cluster lab? Only 'yes' is accepted: "])
    expect(r.stdout).toContain('\u001b[32m  + VM/pve1/100(web)\u001b[39m')
    expect(r.stderr).toContain('Apply cancelled for cluster lab.')
    expect(lab.sim.stats.writes()).toBe(0)
  })

  it('"yes" runs exactly the shown plan in a live block with the running tasks', async () => {
    // the create is held until the live block has shown it running
    const shown = /Applying to cluster lab: .*\n {2}VM\/pve1\/100\(web\) create {2}.*[0-9.]+s/
    lab.sim.control.setTaskBehaviour('qmcreate', { hold: true })
    try {
      const r = await apply(true, [], (text) => {
        if (shown.test(text)) lab.sim.control.setTaskBehaviour('qmcreate', null)
      })
      expect(r.code).toBe(0)
      expect(r.stderr).toMatch(shown)
      expect(r.stdout).toContain('Apply complete for cluster lab: 2 ok, 0 failed, 0 skipped.')
      expect(findCanaries(r.stdout + r.stderr)).toEqual([])
    } finally {
      lab.sim.control.setTaskBehaviour('qmcreate', null)
    }
    // converged: nothing to ask
    const again = await apply(true)
    expect(again.code).toBe(0)
    expect(again.questions).toEqual([])
    expect(again.stdout).toContain('No changes. PVE matches git.')
  })

  it('--yes never asks', async () => {
    const r = await apply(false, ['--yes'])
    expect(r.code).toBe(0)
    expect(r.questions).toEqual([])
  })

  it('a signal during apply lets the running action finish, starts nothing new, and exits 1', async () => {
    commitManifests(repo, vmManifests({ s1: 140, s2: 141, s3: 142 }, 'pve1'), 'three more on pve1')
    // the creates are held until the abort: it always meets the first two running
    lab.sim.control.setTaskBehaviour('qmcreate', { hold: true })
    const controller = new AbortController()
    const stdout = tty()
    const stderr = tty()
    try {
      const running = main(['apply', '--yes'], {
        cwd: repo,
        env: { HOME: homeFor(repo), SOPS_AGE_KEY_FILE: AGE_KEY_FILE, PATH: process.env.PATH },
        io: { stdout, stderr, stdinIsTty: false },
        signal: controller.signal,
      })
      // two per node run at once: stop while the first two are running
      const until = Date.now() + 30_000
      const held = () => lab.sim.control.tasks().filter((t) => t.type === 'qmcreate' && t.status === 'running').length
      while (held() < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
      expect(held()).toBe(2)
      controller.abort(new Error('received SIGTERM'))
      lab.sim.control.setTaskBehaviour('qmcreate', null)
      const code = await running
      expect(code).toBe(1)
      expect(stdout.text()).toMatch(/Apply cancelled for cluster lab: 2 ok, 0 failed, 1 skipped\./)
      expect(
        lab.sim.control
          .guests()
          .map((g) => g.vmid)
          .filter((id) => id >= 140),
      ).toHaveLength(2)
    } finally {
      lab.sim.control.setTaskBehaviour('qmcreate', null)
    }
    const again = await apply(true, ['--yes'])
    expect(again.code).toBe(0)
    expect(
      lab.sim.control
        .guests()
        .map((g) => g.vmid)
        .filter((id) => id >= 140),
    ).toHaveLength(3)
  })
})
