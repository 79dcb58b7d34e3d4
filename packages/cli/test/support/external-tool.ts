/**
 * The real programs that consume what ProxOps ships (Debian's chromium, promtool, systemd-analyze): a test that
 * needs one runs when it is installed. Without it the test skips, announcing it in one line, except where
 * `PROXOPS_REQUIRE_TEST_DATA=1` (CI, .ci/run installs them): there a missing tool fails the suite.
 */
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'

export interface ExternalTool {
  /** the command, found on PATH or by absolute path */
  command: string
  /** arguments that make it print its version and exit 0 */
  versionArgs: readonly string[]
  /** the Debian package that has it */
  debianPackage: string
}

export const CHROMIUM: ExternalTool = {
  command: '/usr/bin/chromium',
  versionArgs: ['--version'],
  debianPackage: 'chromium',
}
export const PROMTOOL: ExternalTool = { command: 'promtool', versionArgs: ['--version'], debianPackage: 'prometheus' }
export const SYSTEMD_ANALYZE: ExternalTool = {
  command: 'systemd-analyze',
  versionArgs: ['--version'],
  debianPackage: 'systemd',
}

export function installed(tool: ExternalTool): boolean {
  const r = spawnSync(tool.command, [...tool.versionArgs], { encoding: 'utf8', timeout: 30_000 })
  return r.status === 0
}

/**
 * `describe` for tests that need `tool`: they run when it is installed; otherwise one announced skip, or one
 * failing test under PROXOPS_REQUIRE_TEST_DATA=1.
 */
export function describeWith(tool: ExternalTool, name: string, body: () => void): void {
  if (installed(tool)) {
    describe(name, body)
    return
  }
  const message = `tests that need ${tool.command}: not installed (apt-get install -y ${tool.debianPackage})`
  if (process.env.PROXOPS_REQUIRE_TEST_DATA === '1') {
    describe(name, () =>
      it(`${tool.command} is installed`, () => expect.fail(`PROXOPS_REQUIRE_TEST_DATA=1 but ${message}`)),
    )
    return
  }
  console.warn(`skipped: ${message}`)
  describe.skip(name, body)
}
