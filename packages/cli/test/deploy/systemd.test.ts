/**
 * deploy/systemd/proxops.service, checked by systemd itself: `systemd-analyze verify` and the offline security
 * review `systemd-analyze security`.
 *
 * Both run without systemd as PID 1 (a container, CI): verify loads the unit into a test manager of its own.
 * Two things make it strict enough to be a check. Verify exits 1 when ExecStart's program is missing, so it runs
 * with `--root` at a scratch tree holding a copy of the host's unit directory (for the targets the unit names) and
 * a stand-in program at ExecStart's path. And an unknown key or a value it cannot parse is only a warning (exit 0),
 * so any line it prints fails the test.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { SYSTEMD_ANALYZE, describeWith } from '../support/external-tool.js'
import { repoRoot } from '../support/exported-metrics.js'

const UNIT = new URL('deploy/systemd/proxops.service', repoRoot)
const INSTALLED = '/etc/systemd/system/proxops.service'

/** a root holding the host's units, the unit under test and a stand-in for the program it starts */
function scratchRoot(unit: string): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'proxops-systemd-'))
  cpSync('/usr/lib/systemd/system', path.join(root, 'usr/lib/systemd/system'), {
    recursive: true,
    verbatimSymlinks: true,
  })
  mkdirSync(path.join(root, path.dirname(INSTALLED)), { recursive: true })
  writeFileSync(path.join(root, INSTALLED), unit)
  const program = /^ExecStart=(\S+)/m.exec(unit)?.[1]
  if (program === undefined) throw new Error('the unit has no ExecStart')
  mkdirSync(path.join(root, path.dirname(program)), { recursive: true })
  writeFileSync(path.join(root, program), '#!/bin/sh\nexit 0\n')
  chmodSync(path.join(root, program), 0o755)
  return root
}

const analyze = (root: string, ...args: string[]) =>
  spawnSync(SYSTEMD_ANALYZE.command, [...args, `--root=${root}`, INSTALLED], { encoding: 'utf8' })

describeWith(SYSTEMD_ANALYZE, 'the systemd unit', () => {
  let root: string
  beforeAll(() => {
    root = scratchRoot(readFileSync(UNIT, 'utf8'))
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('systemd-analyze verify accepts it without a single warning', () => {
    const r = analyze(root, 'verify', '--man=no')
    expect({ status: r.status, output: `${r.stdout}${r.stderr}` }).toEqual({ status: 0, output: '' })
  })

  it("is hardened: systemd-analyze security rates its exposure 2.0 or better (systemd's OK)", () => {
    // the threshold is on systemd's internal 0..100 scale: 20 = the 2.0 it prints
    const r = analyze(root, 'security', '--offline=yes', '--threshold=20', '--no-pager')
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(/Overall exposure level for proxops\.service: [01]\.\d OK/)
  })

  it('runs proxops where deploy/install-tarballs.sh links it, on one repository source', () => {
    const unit = readFileSync(UNIT, 'utf8')
    const script = readFileSync(new URL('deploy/install-tarballs.sh', repoRoot), 'utf8')
    const bindir = /^bindir=\$\{3:-(\S+)\}$/m.exec(script)?.[1]
    const exec = /^ExecStart=(.*)$/m.exec(unit)![1]!.split(' ')
    expect(exec[0]).toBe(`${bindir}/proxops`)
    expect(exec.slice(1, 2)).toEqual(['run'])
    // a checkout (--git-path) or a URL (--git-url), never both, and no WorkingDirectory to read a second one from
    expect(exec.filter((a) => a === '--git-path' || a === '--git-url')).toEqual(['--git-path'])
    expect(unit).not.toMatch(/^WorkingDirectory=/m)
  })

  it('the checks can fail: an unknown key, a bad value, a missing program', () => {
    const good = readFileSync(UNIT, 'utf8')
    for (const [change, seen] of [
      [(u: string) => u.replace('[Service]\n', '[Service]\nProtectSystm=strict\n'), /Unknown key 'ProtectSystm'/],
      [(u: string) => u.replace('Restart=on-failure', 'Restart=sometimes'), /Failed to parse service restart/],
    ] as const) {
      const bad = scratchRoot(change(good))
      try {
        expect(`${analyze(bad, 'verify', '--man=no').stderr}`).toMatch(seen)
      } finally {
        rmSync(bad, { recursive: true, force: true })
      }
    }
    const missing = scratchRoot(good)
    try {
      rmSync(path.join(missing, 'usr/local/bin/proxops'))
      expect(analyze(missing, 'verify', '--man=no').status).not.toBe(0)
    } finally {
      rmSync(missing, { recursive: true, force: true })
    }
  })
})
