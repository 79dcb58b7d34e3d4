import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { Git, HARDENING, execGit, gitEnv, splitUrlCredentials, type GitRunner } from './git.js'
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
    const credential = { origin: 'https://git.example.invalid/', username: 'git', password: 'tok-CANARY' }
    const env = gitEnv(
      { PATH: '/bin', GIT_DIR: '/evil', GIT_SSH_COMMAND: 'evil' },
      { token: 'tok-CANARY', sshKeyFile: "/k/it's", knownHostsFile: '/k/kh' },
      credential,
    )
    expect(env.GIT_TERMINAL_PROMPT).toBe('0')
    expect(env.GIT_DIR).toBeUndefined()
    expect(env.GIT_CONFIG_COUNT).toBe('2')
    // the user's helpers are cleared; ours answers for the remote's origin only, from the environment
    expect([env.GIT_CONFIG_KEY_0, env.GIT_CONFIG_VALUE_0]).toEqual(['credential.helper', ''])
    expect(env.GIT_CONFIG_KEY_1).toBe('credential.https://git.example.invalid/.helper')
    expect(env.GIT_CONFIG_VALUE_1).not.toContain('CANARY')
    expect(env.PROXOPS_GIT_CREDENTIAL_PASSWORD).toBe('tok-CANARY')
    // commands that do not fetch get no credential at all
    expect(Object.values(gitEnv({}, { token: 'tok-CANARY' }))).not.toContain('tok-CANARY')
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

  it('reads HEAD and dirty state without touching the work tree, hardened, never with safe.directory', async () => {
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
    // git's ownership check stays on; what the repository's config could run is off, on every call
    expect(calls.every((args) => !args.some((a) => a.startsWith('safe.directory')))).toBe(true)
    expect(calls.every((args) => args.slice(0, HARDENING.length).join(' ') === HARDENING.join(' '))).toBe(true)
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

  it('the daemon in local mode: HEAD of a checkout (a folder of it too), never its uncommitted edits, its tree untouched', async () => {
    const repo = repoWithCommit('snapshot')
    execFileSync('mkdir', ['-p', path.join(repo, 'ops')])
    writeFileSync(path.join(repo, 'ops', 'm.yaml'), 'committed\n')
    sh(repo, 'add', '.')
    sh(repo, 'commit', '-q', '-m', 'ops')
    const fetches: (readonly string[])[] = []
    const git = new Git({
      redactor: new Redactor(),
      env: process.env,
      runner: (args, o) => (args.includes('fetch') && fetches.push(args), execGit(args, o)),
    })
    writeFileSync(path.join(repo, 'ops', 'm.yaml'), 'uncommitted\n')
    writeFileSync(path.join(repo, 'ops', 'new.yaml'), 'untracked\n')
    const dir = path.join(tmp, 'data', 'git-head')
    const first = await git.snapshot(path.join(repo, 'ops'), dir)
    expect(first.commit).toBe(sh(repo, 'rev-parse', 'HEAD').trim())
    expect(first.root).toBe(path.join(dir, 'ops/'))
    expect(readFileSync(path.join(first.root, 'm.yaml'), 'utf8')).toBe('committed\n')
    expect(existsSync(path.join(first.root, 'new.yaml'))).toBe(false)
    // the same HEAD: nothing fetched again
    expect(await git.snapshot(path.join(repo, 'ops'), dir, first.commit)).toEqual(first)
    expect(fetches).toHaveLength(1)
    // a new commit is followed
    sh(repo, 'commit', '-q', '-am', 'edit')
    const index = readFileSync(path.join(repo, '.git', 'index'))
    const second = await git.snapshot(path.join(repo, 'ops'), dir, first.commit)
    expect(second.commit).not.toBe(first.commit)
    expect(readFileSync(path.join(second.root, 'm.yaml'), 'utf8')).toBe('uncommitted\n')
    // the operator's work tree is as it was: the untracked file stays, nothing reset
    expect(readFileSync(path.join(repo, 'ops', 'new.yaml'), 'utf8')).toBe('untracked\n')
    expect(readFileSync(path.join(repo, '.git', 'index')).equals(index)).toBe(true)
    expect(await git.dirtyPaths(repo)).toEqual(['ops/new.yaml'])
    // a repository without a commit is refused with the reason
    const empty = path.join(tmp, 'empty')
    execFileSync('mkdir', ['-p', empty])
    sh(empty, 'init', '-q')
    await expect(git.snapshot(empty, path.join(tmp, 'data', 'none'))).rejects.toThrow(
      /has no commit yet: the daemon reconciles commits only/,
    )
  })

  it('sends the HTTPS token only when the remote asks and never leaks it into errors', async () => {
    const seen: (string | undefined)[] = []
    const server: Server = createServer((req, res) => {
      seen.push(req.headers.authorization)
      // a challenge first (git asks its credential helper), then a refusal
      res.statusCode = req.headers.authorization ? 403 : 401
      if (!req.headers.authorization) res.setHeader('WWW-Authenticate', 'Basic realm="git"')
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

  it('a token in the URL never reaches argv or the stored remote; the helper answers with it', async () => {
    const seen: (string | undefined)[] = []
    const server: Server = createServer((req, res) => {
      seen.push(req.headers.authorization)
      res.statusCode = req.headers.authorization ? 403 : 401
      if (!req.headers.authorization) res.setHeader('WWW-Authenticate', 'Basic realm="git"')
      res.end()
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const port = (server.address() as { port: number }).port
    const argvs: (readonly string[])[] = []
    const git = new Git({
      redactor: new Redactor(),
      env: process.env,
      runner: (args, o) => (argvs.push(args), execGit(args, o)),
    })
    const cache = path.join(tmp, 'userinfo-cache')
    const error = await git
      .sync(`http://deploy:url-tok-CANARY-3@127.0.0.1:${port}/ops.git`, 'main', cache)
      .catch((e: Error) => e)
    server.close()
    expect((error as Error).message).not.toContain('url-tok-CANARY-3')
    expect(seen).toContain(`Basic ${Buffer.from('deploy:url-tok-CANARY-3').toString('base64')}`)
    expect(JSON.stringify(argvs)).not.toContain('CANARY')
    expect(readFileSync(path.join(cache, '.git', 'config'), 'utf8')).toContain(`url = http://127.0.0.1:${port}/ops.git`)
    expect(readFileSync(path.join(cache, '.git', 'config'), 'utf8')).not.toContain('CANARY')
    expect(splitUrlCredentials('https://u%40x:p%2Fw@h/r.git')).toEqual({
      url: 'https://h/r.git',
      username: 'u@x',
      password: 'p/w',
    })
    expect(splitUrlCredentials('git@host:ops.git')).toEqual({ url: 'git@host:ops.git' })
  })

  it("never runs the repository's fsmonitor or hooks, and keeps git's ownership check", async () => {
    const repo = repoWithCommit('hostile')
    const marker = path.join(tmp, 'fsmonitor-ran')
    const script = path.join(tmp, 'fsmonitor.sh')
    writeFileSync(script, `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 })
    sh(repo, 'config', 'core.fsmonitor', script)
    sh(repo, 'config', 'core.pager', script)
    writeFileSync(path.join(repo, '.git', 'hooks', 'post-checkout'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 })
    writeFileSync(path.join(repo, 'a.yaml'), 'changed\n')
    const git = new Git({ redactor: new Redactor(), env: process.env })
    expect((await git.localRevision(repo)).dirty).toBe(true)
    expect(existsSync(marker)).toBe(false)
    // a checkout owned by someone else is refused by git, with the way to trust it
    if (process.getuid?.() === 0) {
      execFileSync('chown', ['-R', '65534:65534', repo])
      await expect(git.dirtyPaths(repo)).rejects.toThrow(/dubious ownership.*git config --global --add safe\.directory/)
      expect(existsSync(marker)).toBe(false)
    }
  })
})
