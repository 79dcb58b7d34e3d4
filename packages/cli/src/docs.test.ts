/** docs/cli.md stays in sync with yargs: every command and every flag of every --help is documented. */
import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { PassThrough } from 'node:stream'
import { main } from './cli.js'

const doc = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8')
const COMMANDS = [
  'diff',
  'apply',
  'status',
  'show',
  'validate',
  'init',
  'adopt',
  'run',
  'suspend',
  'resume',
  'reconcile',
  'completion',
]

async function help(args: string[]): Promise<string> {
  const stdout = new PassThrough()
  let text = ''
  stdout.on('data', (c: Buffer) => (text += c.toString()))
  const log = console.log
  // yargs prints help through console.log
  console.log = (...parts: unknown[]) => {
    text += `${parts.join(' ')}\n`
  }
  try {
    await main([...args, '--help'], { io: { stdout, stderr: new PassThrough(), stdinIsTty: false }, env: {} })
  } finally {
    console.log = log
  }
  return text
}

function flagsOf(helpText: string): string[] {
  const options = helpText.split('\nOptions:\n')[1]?.split('\nExamples:')[0] ?? ''
  return [...new Set([...options.matchAll(/(?:^|\s)(--[a-z][a-z-]*)/gm)].map((m) => m[1] as string))].sort()
}

describe('docs/cli.md', () => {
  it('documents every command', async () => {
    const root = await help([])
    for (const command of COMMANDS) {
      expect(root).toContain(`proxops ${command}`)
      expect(doc).toContain(`## \`proxops ${command}\``)
      // --help of every command carries examples
      if (command !== 'completion') expect(await help([command])).toContain('Examples:')
    }
  })

  it('documents every flag of every command, and documents no flag that does not exist', async () => {
    const known = new Set<string>(['--no-color'])
    for (const args of [[], ...COMMANDS.filter((c) => c !== 'completion').map((c) => [c])]) {
      const flags = flagsOf(await help(args))
      expect(flags.length).toBeGreaterThan(0)
      for (const flag of flags) {
        known.add(flag)
        expect(doc, `${args.join(' ') || 'proxops'} ${flag}`).toContain(`\`${flag}`)
      }
    }
    const documented = [...doc.matchAll(/^\| `(--[a-z][a-z-]*)/gm)].map((m) => m[1] as string)
    for (const flag of documented) expect(known.has(flag), `${flag} is documented but not a flag`).toBe(true)
  })
})
