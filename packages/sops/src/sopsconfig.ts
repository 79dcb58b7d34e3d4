// `.sops.yaml` creation rules (sops config/config.go): the first rule whose path_regex matches the
// file's path relative to the config file's directory (or that has no path_regex) gives the recipients
// and the encryption rule for a new file. Only age keys are used; a rule without any is Unsupported.
import { readFile, stat } from 'node:fs/promises'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { parse } from 'yaml'
import { SopsError } from './errors.js'
import { type CryptRule, RULE_KINDS } from './rules.js'

export interface CreationRule {
  recipients: string[]
  rule?: CryptRule
  macOnlyEncrypted: boolean
}

const MAX_DEPTH = 100

/** Finds `.sops.yaml` in `start` or its parents, as sops does. */
export async function findSopsConfig(start: string): Promise<string | undefined> {
  let dir = resolve(start)
  for (let i = 0; i < MAX_DEPTH; i++) {
    const candidate = join(dir, '.sops.yaml')
    try {
      if ((await stat(candidate)).isFile()) return candidate
    } catch {
      // keep looking
    }
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
  return undefined
}

function stringList(v: unknown): string[] {
  if (v === undefined || v === null) return []
  const items = Array.isArray(v) ? v : [v]
  return items
    .flatMap((x) => String(x).split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

type RawRule = Record<string, unknown>

/** Picks the creation rule for `file` from the text of the config at `configPath`. */
export function creationRuleFor(configText: string, configPath: string, file: string): CreationRule {
  let conf: unknown
  try {
    conf = parse(configText, { prettyErrors: false })
  } catch {
    throw new SopsError('Malformed', configPath, 'not valid YAML')
  }
  const rules = (conf as { creation_rules?: unknown } | null)?.creation_rules
  if (!Array.isArray(rules)) throw new SopsError('Malformed', configPath, 'no creation_rules list')
  const rel = relative(dirname(resolve(configPath)), resolve(file))
    .split(sep)
    .join('/')
  const chosen = (rules as RawRule[]).find((r) => {
    const re = r?.path_regex
    if (typeof re !== 'string' || re === '') return true
    try {
      return new RegExp(re, 'u').test(rel)
    } catch {
      throw new SopsError(
        'Unsupported',
        configPath,
        `path_regex ${JSON.stringify(re)} is not a JavaScript-compatible regular expression`,
      )
    }
  })
  if (!chosen) throw new SopsError('Malformed', configPath, `no creation rule matches ${rel}`)

  const groups = Array.isArray(chosen.key_groups) ? (chosen.key_groups as RawRule[]) : []
  if (groups.length > 1) throw new SopsError('Unsupported', configPath, 'several key_groups (Shamir) are not supported')
  const recipients = [...stringList(chosen.age), ...stringList(groups[0]?.age)]
  if (recipients.length === 0)
    throw new SopsError('Unsupported', configPath, `the creation rule for ${rel} has no age recipients`)
  for (const k of ['unencrypted_comment_regex', 'encrypted_comment_regex'])
    if (chosen[k]) throw new SopsError('Unsupported', configPath, `the ${k} rule is not supported`)
  const kinds = RULE_KINDS.filter((k) => typeof chosen[k] === 'string' && chosen[k] !== '')
  if (kinds.length > 1)
    throw new SopsError('Malformed', configPath, `several encryption rules are set: ${kinds.join(', ')}`)
  const kind = kinds[0]
  return {
    recipients,
    ...(kind ? { rule: { kind, value: chosen[kind] as string } } : {}),
    macOnlyEncrypted: chosen.mac_only_encrypted === true,
  }
}

export async function loadCreationRule(configPath: string, file: string): Promise<CreationRule> {
  let text: string
  try {
    text = await readFile(configPath, 'utf8')
  } catch {
    throw new SopsError('Malformed', configPath, 'cannot read the sops config')
  }
  return creationRuleFor(text, configPath, file)
}
