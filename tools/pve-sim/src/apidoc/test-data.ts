/**
 * Tests that need the PVE API schema run only where it can be found: it is AGPL data that this repository
 * never holds. Elsewhere (a fresh clone with nothing beside it) they skip, with one line saying what is missing
 * and how to provide it. CI sets `PROXOPS_REQUIRE_TEST_DATA=1`, and then a missing schema fails the suite
 * instead, so CI never silently loses those tests.
 */
import { loadApidoc, type PveVersion } from './load.js'

/** the versions whose skip this process announced: a worker runs many test files, and says it once per version */
const announcedInProcess = new Set<PveVersion>()

/** true when the PVE `version` schema is readable; otherwise announces the skip once (or throws under CI) */
export function apidocForTests(
  version: PveVersion = '9.1',
  env: NodeJS.ProcessEnv = process.env,
  load = loadApidoc,
  announced: Set<PveVersion> = announcedInProcess,
): boolean {
  const loaded = load(version, env)
  if (loaded.ok) return true
  const message =
    `tests that need the PVE ${version} API schema: ${loaded.warning.replace(/^PVE \S+ API schema /, '').replace(/; schema checks are off$/, '')}. ` +
    'Point PROXOPS_PVE_APIDOC at an apidoc.json (or the apidoc.js every PVE node has under /usr/share/pve-docs/api-viewer/)'
  if (env.PROXOPS_REQUIRE_TEST_DATA === '1') throw new Error(`PROXOPS_REQUIRE_TEST_DATA=1 but ${message}`)
  if (!announced.has(version)) {
    announced.add(version)
    console.warn(`skipped: ${message}`)
  }
  return false
}
