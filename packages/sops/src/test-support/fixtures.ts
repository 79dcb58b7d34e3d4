// Locates the third-party SOPS conformance vectors: PROXOPS_SOPS_VECTORS, or ../shared/fixtures/sops next to the
// repository root. They are read in place, never copied (see their SOURCE.md for origin and licences). Without them
// (a fresh clone) their tests skip with one line saying how to provide them; CI sets PROXOPS_REQUIRE_TEST_DATA=1 so
// that a missing directory fails instead of skipping.
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
export const repoRoot = resolve(here, '../../../..')
export const fixturesDir = resolve(process.env.PROXOPS_SOPS_VECTORS ?? resolve(repoRoot, '../shared/fixtures/sops'))

/** whether the vectors are there; otherwise announces the skip once, or throws under PROXOPS_REQUIRE_TEST_DATA=1 */
export function vectorsForTests(dir = fixturesDir, env: NodeJS.ProcessEnv = process.env): boolean {
  if (existsSync(join(dir, 'age', 'keys.txt'))) return true
  const message = `tests that need the SOPS conformance vectors: ${dir} not found. Point PROXOPS_SOPS_VECTORS at a directory with age/ and datakey/ vectors`
  if (env.PROXOPS_REQUIRE_TEST_DATA === '1') throw new Error(`PROXOPS_REQUIRE_TEST_DATA=1 but ${message}`)
  if (!announced) console.warn(`skipped: ${message}`)
  announced = true
  return false
}
let announced = false
export const examplesDir = join(repoRoot, 'examples', 'repository')

export interface Fixture {
  name: string
  path: string
  text: string
  plain: unknown
  dataKey?: Uint8Array
}

/** the vectors of one kind; none where they are absent (see vectorsForTests) */
export function fixtures(kind: 'age' | 'datakey'): Fixture[] {
  const dir = join(fixturesDir, kind)
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((f) => existsSync(join(dir, `${f}.plain.json`)))
    .sort()
    .map((name) => {
      const path = join(dir, name)
      const keyFile = `${path}.datakey`
      return {
        name: `${kind}/${name}`,
        path,
        text: readFileSync(path, 'utf8'),
        plain: JSON.parse(readFileSync(`${path}.plain.json`, 'utf8')) as unknown,
        ...(existsSync(keyFile)
          ? { dataKey: new Uint8Array(Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'hex')) }
          : {}),
      }
    })
}

export function fixtureAgeKeys(): string {
  return readFileSync(join(fixturesDir, 'age', 'keys.txt'), 'utf8')
}
