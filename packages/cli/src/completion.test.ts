/** Completion through the built CLI (`dist/bin.js`) and a real bash, in a copy of the example repository. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { completionScript } from './completion.js'

const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url))
const examples = fileURLToPath(new URL('../../../examples/repository', import.meta.url))
let dir = ''
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'proxops-completion-'))
  mkdirSync(join(dir, 'bin'))
  writeFileSync(join(dir, 'bin', 'proxops'), `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`)
  chmodSync(join(dir, 'bin', 'proxops'), 0o755)
  cpSync(examples, join(dir, 'repo'), { recursive: true })
  execFileSync('git', ['init', '-q'], { cwd: join(dir, 'repo') })
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('completion', () => {
  it('bash completes commands, flags and the cluster names of the repository', () => {
    const lines = [
      'proxops d',
      'proxops diff --cl',
      'proxops diff --cluster ',
      'proxops apply --cluster h',
      'proxops completion ',
    ]
    const script = `eval "$(proxops completion bash)"
for w in ${lines.map((l) => `'${l}'`).join(' ')}; do
  read -ra COMP_WORDS <<< "$w"; [[ "$w" == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); _proxops_completions; echo "\${COMPREPLY[*]}"
done`
    const out = execFileSync('bash', ['-c', script], {
      cwd: join(dir, 'repo'),
      encoding: 'utf8',
      env: { PATH: `${join(dir, 'bin')}:${process.env.PATH}`, HOME: dir },
    }).split('\n')
    expect(out[0]).toBe('diff')
    expect(out[1]).toBe('--cluster')
    expect(out[2]).toBe('edge homelab')
    expect(out[3]).toBe('homelab')
    expect(out[4]?.split(' ')).toEqual(expect.arrayContaining(['bash', 'zsh', 'fish']))
  })

  it('prints a script per shell; without a name, the one of $SHELL', () => {
    expect(completionScript('zsh', {})).toMatch(/^#compdef proxops\n[\s\S]*compdef _proxops proxops\n$/)
    expect(completionScript('fish', {})).toContain("complete -c proxops -f -a '(__proxops_complete)'")
    expect(completionScript(undefined, { SHELL: '/usr/bin/fish' })).toBe(completionScript('fish', {}))
    expect(completionScript(undefined, {})).toBe(completionScript('bash', {}))
    for (const shell of ['bash', 'zsh', 'fish'])
      expect(completionScript(shell, {})).toContain('--get-yargs-completions')
  })
})
