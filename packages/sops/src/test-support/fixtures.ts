// Locates the shared conformance vectors (../shared/fixtures/sops relative to the repository root).
// They are read in place, never copied (see their SOURCE.md for origin and licences).
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
export const repoRoot = resolve(here, '../../../..')
export const fixturesDir = resolve(repoRoot, '../shared/fixtures/sops')
export const examplesDir = join(repoRoot, 'examples')

export interface Fixture {
  name: string
  path: string
  text: string
  plain: unknown
  dataKey?: Uint8Array
}

export function fixtures(kind: 'age' | 'datakey'): Fixture[] {
  const dir = join(fixturesDir, kind)
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
