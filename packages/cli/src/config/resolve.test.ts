import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { CliError } from '../errors.js'
import { parseConfigFile } from './raw.js'
import { mergeConfig, parseListen, parsePruneBudget, resolveCredentials, type MergeInput } from './resolve.js'
import type { DraftConfig } from './types.js'

const ROOT = '/repo'
const cluster = (name: string, body: string) => ({
  name,
  raw: parseConfigFile(`${ROOT}/clusters/${name}/config.yaml`, `pve:\n  clusters:\n    ${name}:\n${body}`, name),
})
const homelab = cluster(
  'homelab',
  `      base-url: https://pve1.lan:8006\n      nodes: [pve1, pve2, pve3]\n      secrets-file: secrets.sops.yaml\n      secrets:\n        pve: { user: u, token-id: tid, token: tok }\n`,
)
const edge = cluster('edge', `      base-url: https://edge1.lan:8006\n      nodes: [edge1]\n`)

function input(over: Partial<MergeInput> = {}): MergeInput {
  return { root: ROOT, clusterFiles: [homelab, edge], flags: {}, home: '/home/op', cwd: '/work', ...over }
}
function err(fn: () => unknown): CliError {
  try {
    fn()
  } catch (e) {
    if (e instanceof CliError) return e
    throw e
  }
  throw new Error('expected a CliError')
}
/** whether `fn` accepts its input (a CliError = refused) */
function ok(fn: () => unknown): boolean {
  try {
    fn()
    return true
  } catch (e) {
    if (e instanceof CliError) return false
    throw e
  }
}

describe('parseConfigFile', () => {
  it("is the schema's parser: validated, normalised and defaulted settings", () => {
    const raw = parseConfigFile(
      '/r/proxops.yaml',
      'log:\n  level: debug\nreconcile:\n  poll-interval: 10s\n  prune-budget: 0\n',
    )
    expect(raw.layer.config.log.level).toBe('debug')
    expect(raw.layer.config.reconcile).toMatchObject({
      'poll-interval': 10_000,
      'prune-budget': 0,
      'task-timeout': 1_800_000,
    })
  })
  it('fails closed on unknown fields, wrong types and malformed YAML, as validate lists them (file:line:col code)', () => {
    expect(err(() => parseConfigFile('/r/proxops.yaml', 'log:\n  levle: debug\n')).message).toBe(
      '/r/proxops.yaml:2:3 config-invalid unknown setting "log.levle"',
    )
    expect(
      err(() =>
        parseConfigFile(
          '/r/c.yaml',
          'pve:\n  clusters:\n    a:\n      base-url: https://a:1\n      tls:\n        insecure: "yes"\n',
        ),
      ).message,
    ).toMatch(/^\/r\/c\.yaml:6:\d+ config-invalid pve\.clusters\.a\.tls\.insecure: must be true or false$/)
    expect(err(() => parseConfigFile('/r/p.yaml', 'log: [\n')).message).toMatch(/^\/r\/p\.yaml:\d+:\d+ yaml-syntax /)
    expect(err(() => parseConfigFile('/r/p.yaml', 'listen: 1\nlog: 2\nx: 3\n')).message).toMatch(
      /^\/r\/p\.yaml:1:9 config-invalid .* \(and 2 more; run proxops validate\)$/,
    )
    expect(err(() => parseConfigFile('/r/p.yaml', 'log: [\n')).code).toBe('CONFIG_PARSE')
    expect(err(() => parseConfigFile('/r/p.yaml', 'listen: 1\nlisten: 2\n')).code).toBe('CONFIG_PARSE')
    expect(err(() => parseConfigFile('/r/p.yaml', '- a\n')).message).toContain('must be a mapping')
  })
})

describe('mergeConfig', () => {
  it('applies defaults and discovers clusters sorted by name', () => {
    const draft = mergeConfig(input())
    expect(draft.clusters.map((c) => c.name)).toEqual(['edge', 'homelab'])
    expect(draft.reconcile).toEqual({
      pollIntervalMs: 30_000,
      taskTimeoutMs: 1_800_000,
      pruneBudget: 3,
      pruneWindow: { max: 10, periodMs: 3_600_000 },
      shutdownTimeoutMs: 120_000,
      disruption: 'stop',
    })
    expect(draft.listen).toEqual({ host: '127.0.0.1', port: 9494 })
    expect(draft.dataDir).toBe('/home/op/.local/share/proxops')
    expect(draft.git).toEqual({ branch: 'main', path: ROOT })
    const h = draft.clusters[1]
    expect(h?.secretsFile).toBe('/repo/clusters/homelab/secrets.sops.yaml')
    expect(h?.tls).toEqual({ insecure: false })
  })

  it('layers proxops.yaml < --config < flags, flags only when given', () => {
    const rootFile = parseConfigFile(
      '/repo/proxops.yaml',
      'log: { level: warn }\nreconcile: { prune-budget: 5, poll-interval: 1m }\nlisten: 0.0.0.0:1\n',
    )
    const configFile = parseConfigFile('/etc/proxops.yaml', 'reconcile: { prune-budget: 7 }\n')
    const d1 = mergeConfig(input({ rootFile, configFile }))
    expect(d1.log.level).toBe('warn')
    expect(d1.reconcile.pruneBudget).toBe(7)
    expect(d1.reconcile.pollIntervalMs).toBe(60_000)
    const d2 = mergeConfig(
      input({
        rootFile,
        configFile,
        flags: { pruneBudget: 'unlimited', logLevel: 'debug', gitPollSec: 5, listen: '[::1]:9000' },
      }),
    )
    expect(d2.reconcile.pruneBudget).toBe('unlimited')
    expect(d2.log.level).toBe('debug')
    expect(d2.reconcile.pollIntervalMs).toBe(5_000)
    expect(d2.listen).toEqual({ host: '::1', port: 9000 })
    expect(d2.allowedHosts).toEqual([])
    const named = parseConfigFile('/repo/proxops.yaml', 'allowed-hosts: [proxops.example.net, 192.0.2.7]\n')
    expect(mergeConfig(input({ rootFile: named })).allowedHosts).toEqual(['proxops.example.net', '192.0.2.7'])
    // --git-poll-sec 0 means "use config"
    expect(mergeConfig(input({ rootFile, flags: { gitPollSec: 0 } })).reconcile.pollIntervalMs).toBe(60_000)
  })

  it('switches git mode: git.url means URL mode, --git-path pins local mode', () => {
    const rootFile = parseConfigFile('/repo/proxops.yaml', 'git:\n  url: https://git.example/ops.git\n  branch: prod\n')
    expect(mergeConfig(input({ rootFile })).git).toEqual({ url: 'https://git.example/ops.git', branch: 'prod' })
    expect(mergeConfig(input({ rootFile, flags: { gitPath: '/repo' } })).git).toEqual({ branch: 'prod', path: ROOT })
    expect(mergeConfig(input({ flags: { gitUrl: 'git@host:ops.git' } })).git.url).toBe('git@host:ops.git')
    expect(err(() => mergeConfig(input({ flags: { gitUrl: 'not a url' } }))).message).toMatch(/^--git-url /)
  })

  it('rejects bad values naming the file, field or flag', () => {
    const bad = (yaml: string) =>
      err(() => mergeConfig(input({ rootFile: parseConfigFile('/repo/proxops.yaml', yaml) }))).message
    expect(bad('reconcile:\n  prune-budget: -1\n')).toBe(
      '/repo/proxops.yaml:2:17 config-invalid reconcile.prune-budget: must be a whole number >= 0 or "unlimited"',
    )
    expect(bad('reconcile:\n  poll-interval: 0s\n')).toMatch(/reconcile\.poll-interval: must be greater than zero/)
    expect(bad('log:\n  level: loud\n')).toMatch(/log\.level: must be one of: debug, info, warn, error/)
    expect(bad('listen: nowhere\n')).toMatch(/listen: must be host:port/)
    expect(bad('allowed-hosts: [https://proxops.example.net]\n')).toMatch(
      /proxops\.yaml:1:\d+ config-invalid allowed-hosts\[0\]: "https:\/\/proxops\.example\.net" is not a host name/,
    )
    expect(bad('allowed-hosts: [proxops.example.net:443]\n')).toMatch(/allowed-hosts\[0\]: .* without scheme or port/)
    expect(bad('allowed-hosts: proxops.example.net\n')).toMatch(/allowed-hosts: must be a list/)
    expect(bad('reconcile:\n  prune-window: { max: -2 }\n')).toMatch(/reconcile\.prune-window\.max: must be at least 0/)
    expect(bad('reconcile:\n  disruption: maybe\n')).toMatch(
      /reconcile\.disruption: must be one of: none, hotplug, reboot, stop, allow/,
    )
    expect(bad('pve:\n  token-value: "root@pam!x"\n')).toMatch(
      /pve\.token-value: must look like user@realm!tokenid=secret/,
    )
    expect(bad('git:\n  url: not a url\n')).toMatch(
      /git\.url: must be an https:\/\/, ssh:\/\/, git@host:path or file:\/\/ URL/,
    )
    expect(err(() => mergeConfig(input({ flags: { pruneBudget: '-1' } }))).message).toMatch(/^--prune-budget must be/)
    expect(err(() => mergeConfig(input({ flags: { pveAuth: 'magic' } }))).message).toBe(
      '--pve-auth must be token or ticket',
    )
    expect(err(() => mergeConfig(input({ flags: { logLevel: 'loud' } }))).message).toBe(
      '--log-level must be one of debug, info, warn, error',
    )
  })

  it("a flag accepts exactly the values its config setting accepts (one list, the schema's)", () => {
    for (const level of ['debug', 'info', 'warn', 'error', 'trace', 'INFO']) {
      const file = ok(() => parseConfigFile('/repo/proxops.yaml', `log:\n  level: ${level}\n`))
      const flag = ok(() => mergeConfig(input({ flags: { logLevel: level } })))
      expect([level, flag]).toEqual([level, file])
    }
    for (const auth of ['token', 'ticket', 'magic', 'Token']) {
      const file = ok(() => parseConfigFile('/repo/proxops.yaml', `pve:\n  auth: ${auth}\n`))
      const flag = ok(() => mergeConfig(input({ flags: { pveAuth: auth } })))
      expect([auth, flag]).toEqual([auth, file])
    }
  })

  it('rejects cluster files that do not match their directory, share an endpoint or carry credentials', () => {
    const wrong = { name: 'edge', raw: homelab.raw }
    expect(err(() => mergeConfig(input({ clusterFiles: [wrong] }))).message).toMatch(
      /must declare exactly pve\.clusters\.edge/,
    )
    const local = (name: string, yaml: string) =>
      err(() => parseConfigFile(`/repo/clusters/${name}/config.yaml`, yaml, name)).message
    expect(local('edge', 'pve:\n  clusters:\n    homelab:\n      base-url: https://e:8006\n')).toMatch(
      /declares pve\.clusters\.homelab, which does not match its directory name/,
    )
    const dup = cluster('dup', '      base-url: https://PVE1.lan:8006/\n')
    expect(err(() => mergeConfig(input({ clusterFiles: [homelab, dup] }))).message).toMatch(
      /already used by cluster "dup"/,
    )
    expect(local('edge', 'pve:\n  token: abc\n  clusters:\n    edge:\n      base-url: https://e:8006\n')).toMatch(
      /pve\.token is not allowed in a cluster-local config/,
    )
    expect(err(() => mergeConfig(input({ clusterFiles: [] }))).message).toMatch(
      /at least one named PVE cluster is required/,
    )
    expect(local('x', 'pve:\n  clusters:\n    x:\n      base-url: ftp://x\n')).toMatch(
      /pve\.clusters\.x\.base-url: base-url "ftp:\/\/x" must use https:\/\//,
    )
    // a URL with credentials is refused without its value (pve-client's baseUrlProblem)
    const withCredentials = local('x', 'pve:\n  clusters:\n    x:\n      base-url: https://root:CANARY-pw@x:8006\n')
    expect(withCredentials).toMatch(/pve\.clusters\.x\.base-url: base-url must not carry credentials/)
    expect(withCredentials).not.toContain('CANARY-pw')
    expect(
      local(
        'p',
        `pve:\n  clusters:\n    p:\n      base-url: https://p:8006\n      tls: { fingerprint: "${'ab:'.repeat(31)}ab", insecure: true }\n`,
      ),
    ).toMatch(/tls\.insecure conflicts with tls\.fingerprint/)
    expect(
      local('p', 'pve:\n  clusters:\n    p:\n      base-url: https://p:8006\n      tls: { fingerprint: abc }\n'),
    ).toMatch(/tls\.fingerprint: fingerprint must be 32 colon-separated hex bytes/)
  })

  it('one parser: what validate accepts the CLI accepts (poll-interval 1.5s, disruption allow, base-url with /api2/json)', () => {
    const rootFile = parseConfigFile('/repo/proxops.yaml', 'reconcile:\n  poll-interval: 1.5s\n  disruption: allow\n')
    const api = cluster('api', '      base-url: https://api.lan:8006/api2/json\n      disruption: allow\n')
    const d = mergeConfig(input({ rootFile, clusterFiles: [api] }))
    expect(d.reconcile.pollIntervalMs).toBe(1500)
    expect(d.reconcile.disruption).toBe('allow')
    expect(d.clusters[0]).toMatchObject({ baseUrl: 'https://api.lan:8006', disruption: 'allow' })
  })

  it('resolves TLS per cluster: cluster ca-file over --ca-file over pve.ca-file, fingerprints upper-cased', () => {
    const rootFile = parseConfigFile('/repo/proxops.yaml', 'pve:\n  ca-file: ~/ca.pem\n')
    const pin = cluster(
      'p',
      `      base-url: https://p:8006\n      tls:\n        fingerprint: "${'ab:'.repeat(31)}ab"\n        ca: ../../own.pem\n`,
    )
    const d = mergeConfig(input({ rootFile, clusterFiles: [pin, edge] }))
    expect(d.clusters.find((c) => c.name === 'edge')?.tls).toEqual({ caFile: '/home/op/ca.pem', insecure: false })
    expect(d.clusters.find((c) => c.name === 'p')?.tls).toEqual({
      caFile: '/repo/own.pem',
      fingerprint: `${'AB:'.repeat(31)}AB`,
      insecure: false,
    })
    const d2 = mergeConfig(input({ rootFile, flags: { caFile: 'x.pem' } }))
    expect(d2.clusters[0]?.tls.caFile).toBe('/work/x.pem')
  })

  it('legacy process fields in cluster files must agree', () => {
    const a = {
      name: 'a',
      raw: parseConfigFile(
        '/repo/clusters/a/config.yaml',
        'listen: 127.0.0.1:1\npve:\n  clusters:\n    a: { base-url: "https://a:1" }\n',
      ),
    }
    const b = {
      name: 'b',
      raw: parseConfigFile(
        '/repo/clusters/b/config.yaml',
        'listen: 127.0.0.1:2\npve:\n  clusters:\n    b: { base-url: "https://b:1" }\n',
      ),
    }
    expect(mergeConfig(input({ clusterFiles: [a] })).listen.port).toBe(1)
    expect(err(() => mergeConfig(input({ clusterFiles: [a, b] }))).message).toMatch(
      /listen: conflicts with \/repo\/clusters\/a\/config.yaml/,
    )
  })
})

describe('resolveCredentials', () => {
  const draft = (yaml = ''): DraftConfig =>
    mergeConfig(input({ rootFile: parseConfigFile('/repo/proxops.yaml', yaml || '{}\n') }))
  const sops = { homelab: { u: 'ops@pve', tid: 'proxops', tok: 'SOPS-SECRET-1' } }

  it('prefers SOPS over env over YAML, per cluster', () => {
    const env = { PROXOPS_PVE_USER: 'env@pam', PROXOPS_PVE_TOKEN: 'ENV-SECRET-2' }
    const c = resolveCredentials(
      draft('pve:\n  user: yaml@pam\n  token-id: yamltid\n  token: YAML-SECRET-3\n'),
      env,
      sops,
    )
    expect(c.clusters.find((x) => x.name === 'homelab')?.credentials).toEqual({
      method: 'token',
      tokenId: 'ops@pve!proxops',
      secret: 'SOPS-SECRET-1',
    })
    expect(c.clusters.find((x) => x.name === 'edge')?.credentials).toEqual({
      method: 'token',
      tokenId: 'env@pam!yamltid',
      secret: 'ENV-SECRET-2',
    })
    // empty env values do not override
    const c2 = resolveCredentials(
      draft('pve:\n  user: yaml@pam\n  token-id: yamltid\n  token: YAML-SECRET-3\n'),
      { PROXOPS_PVE_TOKEN: ' ' },
      sops,
    )
    expect(c2.clusters[0]?.credentials).toEqual({
      method: 'token',
      tokenId: 'yaml@pam!yamltid',
      secret: 'YAML-SECRET-3',
    })
    expect(c2.clusters.map((c) => c.credentials.method === 'token' && c.credentials.secret)).toEqual([
      'YAML-SECRET-3',
      'SOPS-SECRET-1',
    ])
  })

  it('drops the composed token value for SOPS clusters and uses it elsewhere', () => {
    const c = resolveCredentials(draft(), { PROXOPS_PVE_TOKEN_VALUE: 'root@pam!ci=COMPOSED-4' }, sops)
    expect(c.clusters.map((x) => x.credentials)).toEqual([
      { method: 'token', tokenId: 'root@pam!ci', secret: 'COMPOSED-4' },
      { method: 'token', tokenId: 'ops@pve!proxops', secret: 'SOPS-SECRET-1' },
    ])
  })

  it('fails closed on missing SOPS keys and incomplete credentials, never echoing values', () => {
    const e1 = err(() =>
      resolveCredentials(
        draft(),
        { PROXOPS_PVE_TOKEN_VALUE: 'root@pam!ci=CANARY-5' },
        { homelab: { u: 'x@pve', tid: 't' } },
      ),
    )
    expect(e1.message).toBe(
      'pve.clusters.homelab: secrets.pve.token names key "tok", which is missing or empty under secrets: in /repo/clusters/homelab/secrets.sops.yaml',
    )
    const e2 = err(() => resolveCredentials(draft(), { PROXOPS_PVE_TOKEN: 'CANARY-6' }, sops))
    expect(e2.message).toMatch(/^pve\.clusters\.edge: no effective PVE user/)
    expect(e2.message).not.toContain('CANARY-6')
    const e3 = err(() =>
      resolveCredentials(draft(), { PROXOPS_PVE_PASSWORD: 'CANARY-7', PROXOPS_PVE_TOKEN_VALUE: 'a@b!c=d' }, sops),
    )
    expect(e3.message).toMatch(/password is set but pve.auth is token/)
    expect(e3.message).not.toContain('CANARY-7')
    const e4 = err(() => resolveCredentials(draft('pve:\n  auth: ticket\n  user: root@pam\n'), {}, sops))
    expect(e4.message).toMatch(/pve\.clusters\.edge: ticket auth needs a password/)
  })

  it('rejects two clusters with different SOPS git tokens (URL mode)', () => {
    const a = cluster(
      'a',
      '      base-url: https://a:1\n      secrets-file: s.yaml\n      secrets: { git: { token: g } }\n',
    )
    const b = cluster(
      'b',
      '      base-url: https://b:1\n      secrets-file: s.yaml\n      secrets: { git: { token: g } }\n',
    )
    const d = mergeConfig(input({ clusterFiles: [a, b], flags: { gitUrl: 'https://git.example/ops.git' } }))
    const env = { PROXOPS_PVE_TOKEN_VALUE: 'a@b!c=d', PROXOPS_GIT_TOKEN: 'ENV-GIT' }
    expect(resolveCredentials(d, env, { a: { g: 'G1' }, b: { g: 'G1' } }).git.token).toBe('G1')
    expect(err(() => resolveCredentials(d, env, { a: { g: 'G1' }, b: { g: 'G2' } })).message).toMatch(
      /^git token conflict/,
    )
    expect(resolveCredentials(mergeConfig(input()), { ...env }, sops).git.token).toBe('ENV-GIT')
  })

  it('reads the SOPS git token only in URL mode: a local repository needs no proxops-git-token key', () => {
    const a = cluster(
      'a',
      '      base-url: https://a:1\n      secrets-file: s.yaml\n      secrets: { git: { token: proxops-git-token } }\n',
    )
    const env = { PROXOPS_PVE_TOKEN_VALUE: 'a@b!c=d' }
    const local = mergeConfig(input({ clusterFiles: [a] }))
    expect(resolveCredentials(local, env, { a: {} }).git.token).toBeUndefined()
    const url = mergeConfig(input({ clusterFiles: [a], flags: { gitUrl: 'https://git.example/ops.git' } }))
    expect(err(() => resolveCredentials(url, env, { a: {} })).message).toMatch(
      /secrets\.git\.token names key "proxops-git-token", which is missing or empty/,
    )
    expect(resolveCredentials(url, env, { a: { 'proxops-git-token': 'G1' } }).git.token).toBe('G1')
  })

  // property: for any combination of sources, the winner is the highest-precedence non-empty one
  const maybe = fc.option(fc.stringMatching(/^[A-Za-z0-9-]{0,12}$/), { nil: undefined })
  test.prop([maybe, maybe, maybe], { numRuns: 200 })(
    'token secret precedence: SOPS > env > YAML',
    (fromSops, fromEnv, fromYaml) => {
      const refs = fromSops !== undefined ? '      secrets-file: s.yaml\n      secrets: { pve: { token: k } }\n' : ''
      const one = cluster('one', `      base-url: https://one:8006\n${refs}`)
      const yaml = `pve:\n  user: op@pve\n  token-id: t\n${fromYaml !== undefined ? `  token: "${fromYaml}"\n` : ''}`
      const d = mergeConfig(input({ clusterFiles: [one], rootFile: parseConfigFile('/repo/proxops.yaml', yaml) }))
      const env = fromEnv !== undefined ? { PROXOPS_PVE_TOKEN: fromEnv } : {}
      const docs: Record<string, Record<string, string>> = fromSops !== undefined ? { one: { k: fromSops } } : {}
      const expected = fromSops !== undefined ? fromSops : fromEnv || fromYaml
      if (fromSops === '' || !expected) {
        expect(() => resolveCredentials(d, env, docs)).toThrow(CliError)
        return
      }
      const creds = resolveCredentials(d, env, docs).clusters[0]?.credentials
      expect(creds).toEqual({ method: 'token', tokenId: 'op@pve!t', secret: expected })
    },
  )

  test.prop([fc.constantFrom('logLevel', 'pruneBudget', 'listen'), fc.boolean(), fc.boolean()], { numRuns: 100 })(
    'a flag wins over every file, a file over the default',
    (flag, inFile, given) => {
      const values = {
        logLevel: ['debug', 'warn', 'info'],
        pruneBudget: ['9', '4', 3],
        listen: ['127.0.0.1:1', '127.0.0.1:2', '127.0.0.1:9494'],
      }[flag]
      const yaml = {
        logLevel: `log: { level: ${values[1]} }\n`,
        pruneBudget: `reconcile: { prune-budget: ${values[1]} }\n`,
        listen: `listen: "${values[1]}"\n`,
      }[flag]
      const d = mergeConfig(
        input({
          rootFile: parseConfigFile('/repo/proxops.yaml', inFile ? yaml : '{}\n'),
          flags: given ? { [flag]: values[0] } : {},
        }),
      )
      const got = {
        logLevel: d.log.level,
        pruneBudget: d.reconcile.pruneBudget,
        listen: `${d.listen.host}:${d.listen.port}`,
      }[flag]
      const want = given ? values[0] : inFile ? values[1] : values[2]
      expect(String(got)).toBe(String(want))
    },
  )
})

describe('small parsers', () => {
  it('prune budget, window and listen', () => {
    expect(parsePruneBudget('0')).toBe(0)
    expect(parsePruneBudget('unlimited')).toBe('unlimited')
    expect(parsePruneBudget('-1')).toBeUndefined()
    expect(parseListen('127.0.0.1:70000')).toBeUndefined()
  })
})
