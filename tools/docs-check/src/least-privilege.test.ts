/**
 * The least-privilege setup of docs/getting-started.md section 2, done as an admin would: its `pveum` lines are
 * replayed against the simulators through the API (role, user, ACLs, a privilege-separated token), the examples'
 * secrets files are pointed at that token, and the examples converge with it. Without the optional startup grant
 * the one VM that sets `startup` is reported (missing Sys.Modify on /, with the pveum line) and not attempted;
 * without the optional HA grant of section 11 the HA resource of db-01 likewise (missing Sys.Console on /).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Simulator } from '@proxops/pve-sim'
import { decryptSops, encryptSops } from '@proxops/sops'
import { createSandbox, gitCommit, missingBuilds, repoRoot, runInSandbox, type Sandbox } from './sandbox.js'

const DOC = readFileSync(path.join(repoRoot, 'docs/getting-started.md'), 'utf8')
const KEY = readFileSync(path.join(repoRoot, 'examples/repository/keys/test-only.agekey'), 'utf8')

/** the `pveum` commands of the code blocks of one section of the doc, continuation lines joined, in order */
function pveumCommands(from = '## 2.', to = '## 3.'): string[] {
  const section = DOC.slice(DOC.indexOf(from), DOC.indexOf(to))
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string)
  return blocks
    .flatMap((b) => b.replace(/\\\n/g, '').split('\n'))
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l.startsWith('pveum '))
}

/** the shell words of one line ('quoted' and "quoted" words unquoted) */
const words = (line: string): string[] =>
  [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? (m[3] as string))

function api(sim: Simulator, method: string, p: string, params: Record<string, string>): Promise<unknown> {
  const body = new URLSearchParams(params).toString()
  const u = new URL(`${sim.apiUrl}${p}`)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        method,
        hostname: u.hostname,
        port: u.port,
        path: u.pathname,
        ca: sim.caPem,
        headers: {
          Authorization: sim.token.header,
          'Content-Type': 'application/x-www-form-urlencoded',
          'Content-Length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = ''
        res.on('data', (c: Buffer) => (text += c.toString()))
        res.on('end', () =>
          res.statusCode === 200
            ? resolve((JSON.parse(text) as { data: unknown }).data)
            : reject(new Error(`${method} ${p}: ${res.statusCode} ${res.statusMessage} ${text}`)),
        )
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** one `pveum` line as the API calls it stands for; a token's secret is returned */
async function pveum(sim: Simulator, line: string): Promise<string | undefined> {
  const w = words(line).slice(1)
  const opt = (name: string): string | undefined => {
    const i = w.indexOf(`--${name}`)
    return i < 0 ? undefined : w[i + 1]
  }
  const [a, b] = w
  if (a === 'role' && b === 'add')
    await api(sim, 'POST', '/access/roles', { roleid: w[2] as string, privs: opt('privs') ?? '' })
  else if (a === 'user' && b === 'add')
    await api(sim, 'POST', '/access/users', {
      userid: w[2] as string,
      ...(opt('comment') ? { comment: opt('comment') as string } : {}),
    })
  else if (a === 'acl' && b === 'modify') {
    const who = {
      ...(opt('users') ? { users: opt('users') as string } : {}),
      ...(opt('tokens') ? { tokens: opt('tokens') as string } : {}),
    }
    await api(sim, 'PUT', '/access/acl', { path: w[2] as string, roles: opt('roles') ?? '', ...who })
  } else if (a === 'user' && b === 'token' && w[2] === 'add') {
    const made = (await api(
      sim,
      'POST',
      `/access/users/${encodeURIComponent(w[3] as string)}/token/${w[4] as string}`,
      { privsep: opt('privsep') ?? '1' },
    )) as { value: string }
    return made.value
  } else throw new Error(`pveum line not understood: ${line}`)
  return undefined
}

/** the cluster's secrets file, now holding the new token (everything else kept) */
async function pointSecretsAt(file: string, user: string, tokenName: string, secret: string): Promise<void> {
  const identities = KEY.split('\n').filter((l) => l.startsWith('AGE-SECRET-KEY-'))
  const recipient = /public key: (age1[0-9a-z]+)/.exec(KEY)?.[1] as string
  const doc = (await decryptSops(readFileSync(file, 'utf8'), { identities, file })).reveal() as {
    secrets: Record<string, unknown>
  }
  doc.secrets['proxops-user'] = user
  doc.secrets['proxops-token-id'] = tokenName
  doc.secrets['proxops-token'] = secret
  writeFileSync(file, await encryptSops(JSON.stringify(doc), { recipients: [recipient], file: 'secrets.sops.yaml' }))
}

describe('docs/getting-started.md: the least-privilege role converges the examples', () => {
  let sandbox: Sandbox | undefined
  const commands = pveumCommands()
  const base = commands.filter((c) => !c.includes('ProxOpsStartup'))
  const startup = commands.filter((c) => c.includes('ProxOpsStartup'))
  // section 11: the optional grant for spec.ha (HA writes check Sys.Console on /)
  const ha = pveumCommands('## 11.', '## 12.')
  // section 15: the grant for the homelab cluster's access objects (ProxOps' own role, user, token and ACL)
  const access = pveumCommands('## 15.', '## Next')
  const secrets: string[] = []

  beforeAll(async () => {
    const missing = missingBuilds()
    if (missing.length > 0) throw new Error(missing.join('\n'))
    sandbox = await createSandbox()
    const clusters = ['homelab', 'edge']
    for (const [i, sim] of sandbox.sims.entries()) {
      let secret: string | undefined
      for (const line of base) secret = (await pveum(sim, line)) ?? secret
      if (!secret) throw new Error('the doc creates no token')
      secrets.push(secret)
      const tokenLine = base.find((l) => l.includes('token add')) as string
      const [, , , , user, name] = words(tokenLine)
      await pointSecretsAt(
        path.join(sandbox.repo, 'clusters', clusters[i] as string, 'secrets.sops.yaml'),
        user as string,
        name as string,
        secret,
      )
    }
    gitCommit(sandbox.repo, 'secrets: the least-privilege token')
  }, 180_000)
  afterAll(async () => {
    await sandbox?.close()
  })

  const run = async (command: string): Promise<{ code: number | null; output: string }> => {
    if (!sandbox) throw new Error('no sandbox')
    const r = await runInSandbox(sandbox, command)
    for (const s of [...secrets, ...sandbox.secrets])
      expect(r.output.includes(s), `${command} printed a credential`).toBe(false)
    return r
  }

  it('the doc grants a privilege-separated token and optional startup and HA roles', () => {
    expect(base.some((l) => /token add \S+ \S+ --privsep 1/.test(l))).toBe(true)
    expect(startup).toHaveLength(2)
    expect(ha).toHaveLength(2)
  })

  it('without the startup grant: diff names the missing Sys.Modify on / with its pveum line; apply does the rest and exits 1', async () => {
    const diff = await run('proxops diff --cluster homelab')
    expect(diff.code, diff.output).toBe(0)
    expect(diff.output).toContain('lacks Sys.Modify on / (for startup)')
    expect(diff.output).toContain('lacks Sys.Console on /')
    expect(diff.output).toContain("pveum acl modify / --users proxops@pve --tokens 'proxops@pve!gitops'")
    // a saved plan goes through the same preflight, so apply --plan accepts it
    const saved = await run('proxops diff --out least-privilege-plan.json')
    expect(saved.code, saved.output).toBe(0)
    const apply = await run('proxops apply --plan least-privilege-plan.json --yes')
    expect(apply.code, apply.output).toBe(1)
    expect(apply.output).toContain('0 failed')
    expect(apply.output).not.toContain('PLAN_MISMATCH')
    expect(apply.output).not.toMatch(/Permission check failed/)
  }, 300_000)

  it('with the startup, HA and access grants the examples converge: apply, then diff plans nothing', async () => {
    expect(access).toHaveLength(2)
    for (const sim of sandbox?.sims ?? []) for (const line of [...startup, ...ha, ...access]) await pveum(sim, line)
    const apply = await run('proxops apply --yes')
    expect(apply.code, apply.output).toBe(0)
    const diff = await run('proxops diff --detailed-exitcode')
    expect(diff.code, diff.output).toBe(0)
    expect(diff.output).toContain('No changes. PVE matches git.')
  }, 300_000)
})
