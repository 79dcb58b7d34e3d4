import { describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url))

describe('proxops binary', () => {
  it('prints its package version', () => {
    const out = execFileSync(process.execPath, [bin, '--version'], { encoding: 'utf8' })
    expect(out.trim()).toMatch(/^proxops version \d+\.\d+\.\d+/)
  })
})
