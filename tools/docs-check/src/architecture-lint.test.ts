/**
 * The layers docs/architecture.md describes are enforced by `pnpm lint` (eslint.config.mjs): the planner's
 * pipeline reaches a kind only through its registry, a kind reaches only the kit and the contract, and no package
 * has a runtime import circle (import-x's no-cycle). These tests plant violations and run the configured rules on
 * them (without type information, so each takes milliseconds): a rule that stopped firing fails here.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { ESLint, type Linter } from 'eslint'
import tseslint from 'typescript-eslint'
import { afterAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const configUrl = pathToFileURL(join(root, 'eslint.config.mjs')).href
const { default: config } = (await import(configUrl)) as { default: Linter.Config[] }
const parser = { languageOptions: { parser: tseslint.parser as Linter.Parser } }

/** the block of the repository's config that sets `rule`, alone, on TypeScript files under `cwd` */
function only(rule: string, cwd: string): ESLint {
  const block = config.find((c) => c.rules?.[rule] !== undefined)
  if (!block) throw new Error(`eslint.config.mjs sets no ${rule}`)
  return new ESLint({
    cwd,
    overrideConfigFile: true,
    overrideConfig: [{ ...block, ...parser, files: ['**/*.ts'], rules: { [rule]: 'error' } }],
  })
}

async function messages(eslint: ESLint, code: string, file: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) })
  return (result?.messages ?? []).map((m) => m.message)
}

describe('the planner layers (proxops/boundaries)', () => {
  const eslint = only('proxops/boundaries', root)

  it('a pipeline file that imports a kind folder fails; through the registry it passes', async () => {
    expect(
      await messages(eslint, "export { planGuests } from '../kinds/guest/plan.js'\n", 'packages/planner/src/plan/x.ts'),
    ).toEqual([
      'packages/planner/src/plan/x.ts: the pipeline reaches a kind only through src/kinds/index.ts, not ../kinds/guest/plan.js',
    ])
    expect(
      await messages(eslint, "export { KINDS } from '../kinds/index.js'\n", 'packages/planner/src/plan/x.ts'),
    ).toEqual([])
  })

  it('a kind that imports the pipeline or another kind fails; the kit and the contract pass', async () => {
    const file = 'packages/planner/src/kinds/pool/x.ts'
    expect((await messages(eslint, "export { plan } from '../../plan/plan.js'\n", file))[0]).toMatch(
      /^packages\/planner\/src\/kinds\/pool\/x\.ts: may import only src\/kinds\/pool, src\/kit, .* not \.\.\/\.\.\/plan\/plan\.js$/,
    )
    expect(await messages(eslint, "export { haSid } from '../ha/plan.js'\n", file)).toHaveLength(1)
    const fine = "export { write } from '../../kit/runners.js'\nexport type { Plan } from '../../plan-types.js'\n"
    expect(await messages(eslint, fine, file)).toEqual([])
  })

  it('the kit may not reach a kind or the pipeline', async () => {
    expect(
      await messages(eslint, "export { KINDS } from '../kinds/index.js'\n", 'packages/planner/src/kit/x.ts'),
    ).toHaveLength(1)
  })
})

describe('no runtime import circle (import-x/no-cycle)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'proxops-cycle-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const files: Record<string, string> = {
    'a.ts': "import { b } from './b.js'\nexport const a = (): unknown => b\n",
    'b.ts': "import { a } from './a.js'\nexport const b = (): unknown => a\n",
    // a circle of type-only imports vanishes at runtime
    'c.ts': "import type { D } from './d.js'\nexport interface C { d?: D }\n",
    'd.ts': "import type { C } from './c.js'\nexport interface D { c?: C }\n",
  }
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)

  it('fails on a circle of two modules, not on a circle of type imports', async () => {
    const eslint = only('import-x/no-cycle', dir)
    const [a, c] = await eslint.lintFiles([join(dir, 'a.ts'), join(dir, 'c.ts')])
    expect(a?.messages.map((m) => m.message)).toEqual(['Dependency cycle detected'])
    expect(c?.messages).toEqual([])
  })
})
