// `proxops-sops`: encrypt, decrypt and extend sops files without the sops binary. The only place in this
// package that sees the process environment, and only through the `io` it is given (bin.ts passes it).
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { decryptSops } from './decrypt.js'
import { encryptSops } from './encrypt.js'
import { isSopsError } from './errors.js'
import { writeFileAtomic } from './fsutil.js'
import type { Env } from './identities.js'
import { type SopsFormat, formatFromName } from './parse.js'
import { findSopsConfig, loadCreationRule } from './sopsconfig.js'
import { mergeSopsText } from './update.js'

export interface CliIo {
  env: Env
  homeDir: string
  cwd: string
  stdout(text: string): void
  stderr(text: string): void
  readStdin(): Promise<string>
}

export const USAGE = `usage: proxops-sops <command> [options] FILE

commands:
  encrypt FILE      encrypt a plaintext YAML/JSON file (recipients from --age or .sops.yaml creation rules)
  decrypt FILE      print the decrypted file (or one value with --extract a.b.c)
  add FILE PATH     add a value read from stdin at PATH (a.b.c); never overwrites; rewrites FILE atomically
  set FILE PATH [VALUE]
                    set the value at PATH (a.b.c), replacing the one there; without VALUE (or with --stdin) it is
                    read from stdin, so it never lands in shell history; same recipients, rewrites FILE atomically
  recipients FILE   print the file's age recipients

options:
  --age R1,R2       age recipients (encrypt)
  --config PATH     the .sops.yaml to use (default: searched from the working directory upwards)
  -i, --in-place    write the result over FILE (encrypt)
  -o, --output OUT  write the result to OUT instead of stdout (encrypt, decrypt)
  --input-type T    yaml or json (default: from the file name)
  --extract PATH    decrypt: print only this value
  --rotate-data-key add, set: re-encrypt everything under a new data key (same recipients)
  --stdin           set: read the value from stdin (one trailing newline is dropped)
  --version         print the version and exit

identities are found like sops: SOPS_AGE_KEY, SOPS_AGE_KEY_FILE, SOPS_AGE_KEY_CMD, then
$XDG_CONFIG_HOME/sops/age/keys.txt (default ~/.config/sops/age/keys.txt).`

class UsageError extends Error {}

const COMMANDS = ['encrypt', 'decrypt', 'add', 'set', 'recipients'] as const

/** The package's own version, read from its package.json (works from src/ and dist/). */
function version(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version
}

/**
 * Every failure is one line on stderr, `proxops-sops: error: <message>`, the format `proxops` uses; usage errors
 * point at --help instead of printing it.
 */
function fail(io: CliIo, message: string, usage: boolean): number {
  io.stderr(
    `proxops-sops: error: ${message.replace(/\s*\n\s*/g, ' | ').trim()}${usage ? ' (see proxops-sops --help)' : ''}\n`,
  )
  return usage ? 2 : 1
}

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        age: { type: 'string' },
        config: { type: 'string' },
        'in-place': { type: 'boolean', short: 'i' },
        output: { type: 'string', short: 'o' },
        'input-type': { type: 'string' },
        extract: { type: 'string' },
        'rotate-data-key': { type: 'boolean' },
        stdin: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
    })
  } catch (e) {
    // node's parseArgs says e.g. "Unknown option '--agee'. To specify a positional argument starting with a '-', ..."
    return fail(io, (e as Error).message.split('. ')[0]!, true)
  }
  const { values: o, positionals } = parsed
  if (o.version) {
    io.stdout(`proxops-sops version ${version()}\n`)
    return 0
  }
  if (o.help) {
    io.stdout(`${USAGE}\n`)
    return 0
  }
  const [command, fileArg, pathArg, valueArg] = positionals
  try {
    if (!command) throw new UsageError(`no command given: one of ${COMMANDS.join(', ')}`)
    if (!(COMMANDS as readonly string[]).includes(command))
      throw new UsageError(`unknown command "${command}": one of ${COMMANDS.join(', ')}`)
    if (!fileArg) throw new UsageError(`${command} needs FILE`)
    const file = resolve(io.cwd, fileArg)
    const type = o['input-type']
    if (type !== undefined && type !== 'yaml' && type !== 'json')
      throw new UsageError('--input-type must be yaml or json')
    const format: SopsFormat = type ?? formatFromName(file)
    const text = await readInput(file)
    const discovery = { env: io.env, homeDir: io.homeDir }
    const out = async (result: string, inPlace = false) => {
      const target = inPlace ? file : o.output ? resolve(io.cwd, o.output) : undefined
      if (target) await writeFileAtomic(target, result)
      else io.stdout(result)
    }
    switch (command) {
      case 'encrypt': {
        const configPath = o.config ? resolve(io.cwd, o.config) : await findSopsConfig(io.cwd)
        const fromConfig = !o.age && configPath ? await loadCreationRule(configPath, file) : undefined
        const recipients = o.age
          ? o.age
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
          : (fromConfig?.recipients ?? [])
        if (recipients.length === 0) throw new UsageError('no recipients: pass --age or add a .sops.yaml creation rule')
        const encrypted = await encryptSops(text, {
          recipients,
          file,
          format,
          ...(fromConfig?.rule ? { rule: fromConfig.rule } : {}),
          macOnlyEncrypted: fromConfig?.macOnlyEncrypted === true,
        })
        await out(encrypted, o['in-place'] === true)
        return 0
      }
      case 'decrypt': {
        const doc = await decryptSops(text, { file, format, discovery })
        if (o.extract !== undefined) {
          const value = doc.get(o.extract)
          if (!value) throw new UsageError(`no scalar value at ${o.extract}`)
          io.stdout(`${value.revealString()}\n`)
        } else await out(doc.revealText())
        return 0
      }
      case 'add': {
        if (!pathArg) throw new UsageError('add needs FILE and PATH; the value is read from stdin')
        const value = (await io.readStdin()).replace(/\r?\n$/, '')
        const rotateDataKey = o['rotate-data-key'] === true
        const r = await mergeSopsText(text, [{ path: pathArg, value }], { file, format, discovery, rotateDataKey })
        if (r.text === undefined) return fail(io, `${pathArg} already exists; nothing written`, false)
        await writeFileAtomic(file, r.text, { expectedCurrent: text })
        return 0
      }
      case 'set': {
        if (!pathArg) throw new UsageError('set needs FILE and PATH, and VALUE or --stdin')
        if (valueArg !== undefined && o.stdin) throw new UsageError('set takes VALUE or --stdin, not both')
        const value = valueArg ?? (await io.readStdin()).replace(/\r?\n$/, '')
        const rotateDataKey = o['rotate-data-key'] === true
        const r = await mergeSopsText(text, [{ path: pathArg, value }], {
          file,
          format,
          discovery,
          rotateDataKey,
          overwrite: true,
        })
        await writeFileAtomic(file, r.text!, { expectedCurrent: text })
        return 0
      }
      case 'recipients': {
        const doc = await decryptSops(text, { file, format, discovery })
        io.stdout(doc.recipients.map((r) => `${r}\n`).join(''))
        return 0
      }
      default:
        throw new UsageError(`unknown command "${command}"`)
    }
  } catch (e) {
    if (e instanceof UsageError) return fail(io, e.message, true)
    // SopsError messages never contain secrets; anything else is reported by its kind only.
    return fail(io, isSopsError(e) ? e.message : `unexpected ${(e as Error)?.name ?? 'error'}`, false)
  }
}

async function readInput(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (e) {
    throw new UsageError(`cannot read ${file} (${String((e as { code?: unknown }).code ?? 'error')})`)
  }
}
