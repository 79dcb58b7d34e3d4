// age identity discovery, as sops does it (age/keysource.go loadIdentities), but as a library: the
// environment, the home directory and the I/O are arguments, so nothing here reads process.env.
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import { SopsError } from './errors.js'
import { Secret } from './secret.js'

/** One age private key and where it came from. The key is a Secret: it never prints. */
export interface AgeIdentity {
  readonly key: Secret<string>
  /** Public description of the source, e.g. `SOPS_AGE_KEY_FILE (/path) line 3`. */
  readonly source: string
}

export type Env = Readonly<Record<string, string | undefined>>

export interface DiscoveryOptions {
  env: Env
  homeDir: string
  /** Passed to SOPS_AGE_KEY_CMD as SOPS_AGE_RECIPIENT, like sops does per recipient. */
  recipient?: string
  readFile?: (path: string) => Promise<string>
  /** Runs argv with the given environment and returns stdout. */
  runCommand?: (argv: readonly string[], env: Env) => Promise<string>
}

export interface DiscoveryResult {
  identities: AgeIdentity[]
  /** Locations that yielded at least one identity. */
  used: string[]
  /** Locations looked at that yielded nothing. */
  unused: string[]
  /** Problems found on the way (never key material): unreadable files, bad lines, failed commands. */
  problems: string[]
}

/** Wraps caller-supplied identity strings (each may hold several lines, comments allowed); bad lines are NoIdentity. */
export function identitiesFromStrings(keys: readonly string[], source = 'caller'): AgeIdentity[] {
  const out: AgeIdentity[] = []
  const problems: string[] = []
  keys.forEach((k, i) => out.push(...parseIdentities(k, `${source}[${i}]`, true, problems)))
  if (problems.length > 0) throw new SopsError('NoIdentity', source, problems.join('; '))
  return out
}

/**
 * Parses a keys file: one identity per line (or several per line for SOPS_AGE_KEY), empty lines and
 * lines starting with `#` ignored. Bad lines are reported in `problems` by line number only.
 */
export function parseIdentities(
  text: string,
  source: string,
  multiplePerLine: boolean,
  problems: string[],
): AgeIdentity[] {
  const out: AgeIdentity[] = []
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) return
    for (const word of multiplePerLine ? line.split(/\s+/) : [line]) {
      const where = `${source} line ${i + 1}`
      if (/^AGE-SECRET-KEY-(PQ-)?1[0-9A-Z]+$/.test(word)) out.push({ key: new Secret(word, 'str'), source: where })
      else if (word.startsWith('AGE-PLUGIN-')) problems.push(`${where}: age plugin identities are not supported`)
      else problems.push(`${where}: not an age identity`)
    }
  })
  return out
}

export async function discoverIdentities(opts: DiscoveryOptions): Promise<DiscoveryResult> {
  const { env } = opts
  const read = opts.readFile ?? ((p: string) => readFile(p, 'utf8'))
  const run = opts.runCommand ?? runCommand
  const result: DiscoveryResult = { identities: [], used: [], unused: [], problems: [] }
  const add = (text: string, location: string, multi: boolean) => {
    const ids = parseIdentities(text, location, multi, result.problems)
    result.identities.push(...ids)
    ;(ids.length > 0 ? result.used : result.unused).push(location)
  }

  const direct = env.SOPS_AGE_KEY
  if (direct !== undefined) add(direct, 'SOPS_AGE_KEY', true)
  else result.unused.push('SOPS_AGE_KEY')

  const keyFile = env.SOPS_AGE_KEY_FILE
  if (keyFile !== undefined) {
    const location = `SOPS_AGE_KEY_FILE (${keyFile})`
    try {
      add(await read(keyFile), location, false)
    } catch (e) {
      result.problems.push(`${location}: cannot read (${errnoCode(e)})`)
    }
  } else result.unused.push('SOPS_AGE_KEY_FILE')

  const cmd = env.SOPS_AGE_KEY_CMD
  if (cmd !== undefined) {
    try {
      const argv = shellSplit(cmd)
      if (argv.length === 0) throw new Error('empty command')
      const cmdEnv = opts.recipient === undefined ? env : { ...env, SOPS_AGE_RECIPIENT: opts.recipient }
      add(await run(argv, cmdEnv), 'SOPS_AGE_KEY_CMD', false)
    } catch (e) {
      // The command line itself may carry secrets, so only the failure kind is reported.
      result.problems.push(`SOPS_AGE_KEY_CMD: command failed (${errnoCode(e)})`)
    }
  } else result.unused.push('SOPS_AGE_KEY_CMD')

  const keysTxt = defaultKeysFile(env, opts.homeDir)
  if (keysTxt !== undefined) {
    try {
      add(await read(keysTxt), keysTxt, false)
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') result.unused.push(keysTxt)
      else result.problems.push(`${keysTxt}: cannot read (${errnoCode(e)})`)
    }
  }
  return result
}

/** `$XDG_CONFIG_HOME/sops/age/keys.txt`, else `<home>/.config/sops/age/keys.txt` (Go os.UserConfigDir). */
export function defaultKeysFile(env: Env, homeDir: string): string | undefined {
  const xdg = env.XDG_CONFIG_HOME
  if (xdg) return isAbsolute(xdg) ? join(xdg, 'sops', 'age', 'keys.txt') : undefined
  return homeDir ? join(homeDir, '.config', 'sops', 'age', 'keys.txt') : undefined
}

function errnoCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code
  return typeof code === 'string' || typeof code === 'number' ? String(code) : 'error'
}

/** Splits a command line like github.com/google/shlex: whitespace, quotes and backslash escapes. */
export function shellSplit(s: string): string[] {
  const out: string[] = []
  let cur = ''
  let inWord = false
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string
    if (/\s/.test(c)) {
      if (inWord) out.push(cur)
      cur = ''
      inWord = false
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1)
      if (end < 0) throw new Error('unterminated quote')
      cur += s.slice(i + 1, end)
      i = end
      inWord = true
    } else if (c === '"') {
      let j = i + 1
      for (; j < s.length && s[j] !== '"'; j++) {
        if (s[j] === '\\' && j + 1 < s.length && '"\\$`\n'.includes(s[j + 1] as string)) j++
        cur += s[j]
      }
      if (j >= s.length) throw new Error('unterminated quote')
      i = j
      inWord = true
    } else if (c === '\\' && i + 1 < s.length) {
      cur += s[++i]
      inWord = true
    } else {
      cur += c
      inWord = true
    }
  }
  if (inWord) out.push(cur)
  return out
}

function runCommand(argv: readonly string[], env: Env): Promise<string> {
  const [cmd = '', ...args] = argv
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env: env, timeout: 30_000, maxBuffer: 1 << 20 }, (err, stdout) => {
      // execFile's error is an Error; its declared type loses that through Omit<>.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      if (err) reject(err)
      else resolve(stdout)
    })
  })
}
