/**
 * deploy/container/Containerfile, read statically (CI has no container runtime and no registry): a slim Node.js
 * base of a supported major, a numeric non-root user for everything that runs, nothing copied in (the repository
 * and the age key are mounted), and the paths its header's run command mounts are the ones the image uses.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../support/exported-metrics.js'

const text = readFileSync(new URL('deploy/container/Containerfile', repoRoot), 'utf8')
/** instructions with their continuation lines joined, comments left out */
const instructions = text
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'))
  .map((l) => {
    const [op, ...rest] = l.split(/\s+/)
    return { op: op!.toUpperCase(), args: rest.join(' ') }
  })
const all = (op: string) => instructions.filter((i) => i.op === op).map((i) => i.args)
const one = (op: string) => {
  const found = all(op)
  expect(found, op).toHaveLength(1)
  return found[0]!
}
const env = Object.fromEntries(
  [
    ...all('ENV')
      .join(' ')
      .matchAll(/(\w+)=(\S+)/g),
  ].map((m) => [m[1]!, m[2]!]),
)
const cmd = JSON.parse(one('CMD')) as string[]
const engines = (
  JSON.parse(readFileSync(new URL('packages/cli/package.json', repoRoot), 'utf8')) as { engines: { node: string } }
).engines.node

describe('the Containerfile', () => {
  it('starts from a slim Node.js image of a major the CLI supports', () => {
    const m = /^(?:docker\.io\/library\/)?node:(\d+)-bookworm-slim$/.exec(one('FROM'))
    expect(m, one('FROM')).not.toBeNull()
    expect(Number(m![1])).toBeGreaterThanOrEqual(Number(/>=\s*(\d+)/.exec(engines)![1]))
  })

  it('runs as a numeric non-root user, set after the last build step and before the entry point', () => {
    const user = one('USER')
    expect(user).toMatch(/^[1-9]\d*:[1-9]\d*$/)
    const at = (op: string) => instructions.map((i) => i.op).lastIndexOf(op)
    expect(at('USER')).toBeGreaterThan(at('RUN'))
    expect(at('USER')).toBeLessThan(at('ENTRYPOINT'))
    expect(text).toContain(`--uid ${user.split(':')[0]}`)
  })

  it('copies nothing in and installs one named release of the CLI', () => {
    expect(all('COPY')).toEqual([])
    expect(all('ADD')).toEqual([])
    expect(one('ARG')).toBe('PROXOPS_VERSION')
    expect(text).toContain('npm install -g --omit=dev "@proxops/cli@${PROXOPS_VERSION}"')
    expect(JSON.parse(one('ENTRYPOINT'))).toEqual(['proxops'])
  })

  it('mounts what it uses: the repository and the age key read-only, the data directory as a volume', () => {
    const run = text
      .split('\n')
      .filter((l) => /^# {3}/.test(l))
      .join('\n')
    const repo = one('WORKDIR')
    const data = cmd[cmd.indexOf('--data-dir') + 1]!
    expect(cmd.slice(0, 1)).toEqual(['run'])
    expect(cmd[cmd.indexOf('--git-path') + 1]).toBe(repo)
    expect(run).toContain(`:${repo}:ro`)
    expect(run).toContain(`:${env.SOPS_AGE_KEY_FILE}:ro`)
    expect(env.SOPS_AGE_KEY_FILE).toMatch(/^\/run\/secrets\//)
    expect(JSON.parse(one('VOLUME'))).toEqual([data])
    expect(run).toContain(`:${data} `)
    expect(env.HOME).toBe(data)
    // git refuses a repository another user owns unless told it is safe
    expect(text).toContain(`safe.directory ${repo}`)
  })

  it('publishes the HTTP port on the host loopback only in its example', () => {
    const listen = cmd[cmd.indexOf('--listen') + 1]!
    expect(one('EXPOSE')).toBe(listen.split(':')[1])
    expect(text).toContain(`-p 127.0.0.1:${one('EXPOSE')}:${one('EXPOSE')}`)
  })
})
