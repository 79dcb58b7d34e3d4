import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { Git, execGit, gitEnv, type GitRunner } from './git.js'
import { Redactor } from './redact.js'

const tmp = mkdtempSync(path.join(os.tmpdir(), 'proxops-git-'))
const sh = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
  })

function repoWithCommit(name: string): string {
  const dir = path.join(tmp, name)
  execFileSync('mkdir', ['-p', dir])
  sh(dir, 'init', '-q')
  writeFileSync(path.join(dir, 'a.yaml'), 'one\n')
  sh(dir, 'add', '.')
  sh(dir, 'commit', '-q', '-m', 'first')
  return dir
}

afterAll(() => rmSync(tmp, { recursive: true, force: true }))

describe('gitEnv', () => {
  it('puts the token in GIT_CONFIG_* (never argv), disables prompts and sets the SSH command', () => {
    const env = gitEnv(
      { PATH: '/bin', GIT_DIR: '/evil', GIT_SSH_COMMAND: 'evil' },
      { token: 'tok-CANARY', sshKeyFile: "/k/it's", knownHostsFile: '/k/kh' },
    )
    expect(env.GIT_TERMINAL_PROMPT).toBe('0')
    expect(env.GIT_DIR).toBeUndefined()
    expect(env.GIT_CONFIG_COUNT).toBe('2')
    expect(env.GIT_CONFIG_KEY_0).toBe('http.extraHeader')
    expect(env.GIT_CONFIG_VALUE_0).toBe(`Authorization: Basic ${Buffer.from('git:tok-CANARY').toString('base64')}`)
    expect(env.GIT_SSH_COMMAND).toBe(
      `ssh -i '/k/it'\\''s' -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes -o 'UserKnownHostsFile=/k/kh'`,
    )
  })
})

describe('Git (temporary repositories)', () => {
  let origin: string
  beforeAll(() => {
    origin = repoWithCommit('origin')
  })

  it('reads HEAD and dirty state without touching the work tree, with safe.directory', async () => {
    const calls: (readonly string[])[] = []
    const runner: GitRunner = (args, o) => {
      calls.push(args)
      return execGit(args, o)
    }
    const git = new Git({ redactor: new Redactor(), env: process.env, runner })
    const head = await git.head(origin)
    expect(head).toMatch(/^[0-9a-f]{40}$/)
    expect(await git.localRevision(origin)).toEqual({ commit: head, dirty: false })
    writeFileSync(path.join(origin, 'new.yaml'), 'x\n')
    const dirty = await git.localRevision(origin)
    expect(dirty.dirty).toBe(true)
    expect(dirty.commit).toMatch(new RegExp(`^${head}-dirty-[0-9a-f]{12}$`))
    writeFileSync(path.join(origin, 'new.yaml'), 'y\n')
    const edited = await git.localRevision(origin)
    expect(edited.commit).not.toBe(dirty.commit)
    // a saved plan written into the work tree is left out when asked, whatever it holds
    writeFileSync(path.join(origin, 'plan.json'), '{}\n')
    expect(await git.localRevision(origin, { ignore: [path.join(origin, 'plan.json')] })).toEqual(edited)
    expect((await git.localRevision(origin)).commit).not.toBe(edited.commit)
    expect(calls.every((args) => args[0] === '-c' && args[1] === `safe.directory=${origin}`)).toBe(true)
    // the tree is as we left it: nothing reset, nothing cleaned
    expect(readFileSync(path.join(origin, 'new.yaml'), 'utf8')).toBe('y\n')
    rmSync(path.join(origin, 'new.yaml'))
    expect(await git.head(path.join(tmp))).toBeUndefined()
  })

  it('URL mode: clones into its own directory, one fetch per sync, follows new commits', async () => {
    const calls: (readonly string[])[] = []
    const git = new Git({
      redactor: new Redactor(),
      env: process.env,
      runner: (args, o) => {
        calls.push(args)
        return execGit(args, o)
      },
    })
    const fetches = () => calls.filter((a) => a.includes('fetch')).length
    const cache = path.join(tmp, 'data', 'git-cache')
    const first = await git.sync(`file://${origin}`, 'main', cache)
    expect(first).toBe(sh(origin, 'rev-parse', 'HEAD').trim())
    expect(fetches()).toBe(1)
    expect(readFileSync(path.join(cache, 'a.yaml'), 'utf8')).toBe('one\n')
    writeFileSync(path.join(origin, 'a.yaml'), 'two\n')
    sh(origin, 'commit', '-q', '-am', 'second')
    writeFileSync(path.join(cache, 'stray'), 'x')
    const second = await git.sync(`file://${origin}`, 'main', cache)
    expect(second).not.toBe(first)
    expect(fetches()).toBe(2)
    // never a shell, and the URL always after `--`
    for (const args of calls.filter((a) => a.includes(`file://${origin}`)))
      expect(args[args.indexOf(`file://${origin}`) - 1]).toBe('--')
    expect(readFileSync(path.join(cache, 'a.yaml'), 'utf8')).toBe('two\n')
    expect(existsSync(path.join(cache, 'stray'))).toBe(false)
    await expect(git.sync(`file://${origin}`, 'nope', cache)).rejects.toThrow(/^git fetch failed: fatal: /)
  })

  it('sends the HTTPS token only as a header and never leaks it into errors', async () => {
    const seen: (string | undefined)[] = []
    const server: Server = createServer((req, res) => {
      seen.push(req.headers.authorization)
      res.statusCode = 403
      res.end('denied tok-CANARY-9')
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const port = (server.address() as { port: number }).port
    const argvs: (readonly string[])[] = []
    const git = new Git({
      redactor: new Redactor(),
      env: process.env,
      auth: { token: 'tok-CANARY-9' },
      runner: (args, o) => {
        argvs.push(args)
        return execGit(args, o)
      },
    })
    const error = await git
      .sync(`http://127.0.0.1:${port}/ops.git`, 'main', path.join(tmp, 'http-cache'))
      .catch((e: Error) => e)
    server.close()
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toMatch(/^git fetch failed: /)
    expect((error as Error).message).not.toContain('tok-CANARY-9')
    expect(seen).toContain(`Basic ${Buffer.from('git:tok-CANARY-9').toString('base64')}`)
    expect(JSON.stringify(argvs)).not.toContain('CANARY')
    expect(JSON.stringify(argvs)).not.toContain(Buffer.from('git:tok-CANARY-9').toString('base64'))
  })
})
