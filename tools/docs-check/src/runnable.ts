/**
 * Defines the tests for one page: its blocks marked runnable (```sh runnable) run, in order, in a fresh sandbox
 * against the simulator. Each command must exit 0, or the status its trailing comment names (`# exit 2`), and
 * print every "quoted string" of that comment. No command may print a credential.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runnableBlocks, splitCommands } from './markdown.js'
import { createSandbox, missingBuilds, repoRoot, runInSandbox, staleBuilds, type Sandbox } from './sandbox.js'

export function defineRunnablePage(file: string, minCommands: number): void {
  const text = readFileSync(path.join(repoRoot, file), 'utf8')
  const commands = runnableBlocks(text).flatMap((block) =>
    splitCommands(block.body).map((c) => ({ ...c, docLine: block.line + c.line })),
  )

  describe(`${file}: runnable blocks against the simulator`, () => {
    let sandbox: Sandbox | undefined

    beforeAll(async () => {
      const missing = missingBuilds()
      if (missing.length > 0) throw new Error(missing.join('\n'))
      for (const warning of staleBuilds()) console.warn(`docs-check: ${warning}`)
      sandbox = await createSandbox()
    }, 120_000)
    afterAll(async () => {
      await sandbox?.close()
    })

    it(`has at least ${minCommands} runnable command(s)`, () => {
      expect(commands.length).toBeGreaterThanOrEqual(minCommands)
    })

    for (const command of commands) {
      const label = `${file}:${command.docLine}: ${command.text.split('\n')[0]}`
      it(
        label,
        async () => {
          if (!sandbox) throw new Error('no sandbox (see beforeAll)')
          const result = await runInSandbox(sandbox, command.text)
          const context = `${label}\n--- output ---\n${result.output}`
          expect(result.code, context).toBe(command.exit)
          for (const expected of command.contains) expect(result.output, context).toContain(expected)
          for (const secret of sandbox.secrets)
            expect(result.output.includes(secret), `${label}: printed a credential`).toBe(false)
        },
        180_000,
      )
    }
  })
}
