/**
 * Completion through the built CLI (`dist/bin.js`) and real shells (bash, zsh, fish), in a copy of the example
 * repository. CI installs zsh and fish (.ci/run); elsewhere their tests skip when the shell is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFileSync, spawnSync } from 'node:child_process'
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

/** What each shell is asked to complete: the text before the cursor. */
const LINES = [
  'proxops d',
  'proxops diff --cl',
  'proxops diff --cluster ',
  'proxops apply --cluster h',
  'proxops completion ',
]
const quoted = LINES.map((l) => `'${l}'`).join(' ')

/** Runs `script` in `shell` inside the repository copy; one output line per entry of LINES. */
function complete(shell: string, args: readonly string[], script: string): string[] {
  return execFileSync(shell, [...args, script], {
    cwd: join(dir, 'repo'),
    encoding: 'utf8',
    env: { PATH: `${join(dir, 'bin')}:${process.env.PATH}`, HOME: dir, SHELL: `/bin/${shell}` },
  }).split('\n')
}

function expectCandidates(out: readonly string[]): void {
  expect(out[0]).toBe('diff')
  expect(out[1]).toBe('--cluster')
  expect(out[2]).toBe('edge homelab')
  expect(out[3]).toBe('homelab')
  expect(out[4]?.split(' ')).toEqual(expect.arrayContaining(['bash', 'zsh', 'fish']))
  // candidates only: no yargs descriptions (`diff:Show ...`) reach the shell
  expect(out.slice(0, 5).join(' ')).not.toMatch(/[:\t]/)
}

/** A test that needs `shell`: skipped when it is not installed, except in CI, where it must be. */
function withShell(shell: string, name: string, fn: () => void): void {
  if (spawnSync(shell, ['-c', 'exit 0']).status === 0) it(name, fn)
  else if (process.env.CI) it(name, () => expect.fail(`${shell} not found on PATH; .ci/run installs it`))
  else it.skip(`${name} (${shell} not installed: apt-get install -y ${shell})`, fn)
}

describe('completion', () => {
  it('bash completes commands, flags and the cluster names of the repository', () => {
    const script = `eval "$(proxops completion bash)"
for w in ${quoted}; do
  read -ra COMP_WORDS <<< "$w"; [[ "$w" == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); _proxops_completions; echo "\${COMPREPLY[*]}"
done`
    expectCandidates(complete('bash', ['-c'], script))
  })

  // zsh hands a completion function \`words\` and \`CURRENT\` and takes candidates through compadd; outside
  // an interactive line editor, compadd is replaced by one that prints what it is given
  withShell('zsh', 'zsh completes commands, flags and the cluster names of the repository', () => {
    const script = `compdef() { : }
compadd() { [[ $1 == -- ]] && shift; print -r -- "\${(j: :)@}" }
eval "$(proxops completion zsh)"
for line in ${quoted}; do
  words=(\${(z)line}); [[ $line == *" " ]] && words+=(""); CURRENT=\${#words}; _proxops
done`
    expectCandidates(complete('zsh', ['-f', '-c'], script))
  })

  // fish's own completion engine: \`complete -C\` completes a command line as the prompt would
  withShell('fish', 'fish completes commands, flags and the cluster names of the repository', () => {
    const script = `proxops completion fish | source
for line in ${quoted}
  echo (complete -C"$line" | string join " ")
end`
    expectCandidates(complete('fish', ['--no-config', '-c'], script))
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
