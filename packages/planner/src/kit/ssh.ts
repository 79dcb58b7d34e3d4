import { createHash } from 'node:crypto'
import { sshKeyLines } from '@proxops/pve-client/wire'

/**
 * The adopted entry name of a public key: `adopted-` + the first 8 bytes of
 * SHA-256(`sshpki` NUL type NUL base64-blob) as hex. The comment column does not count.
 */
export function adoptKeyName(key: string): string {
  const [type = '', blob = ''] = key.trim().split(/\s+/)
  const digest = createHash('sha256').update(`sshpki\0${type}\0${blob}`).digest('hex')
  return `adopted-${digest.slice(0, 16)}`
}

export interface SshMapping {
  refs?: string[]
  /** keys that matched no entry (the VM keeps `["*"]` unless they are imported) */
  unmatched: string[]
  imported: { name: string; value: string }[]
}

/**
 * Maps live keys onto SOPS entries. Every key must match an entry verbatim (as a whole entry or as one of
 * its lines) for refs to be used; with `importKeys`, unmatched keys get new entries.
 */
export function mapSshKeys(
  live: readonly string[],
  entries: Readonly<Record<string, string>> | undefined,
  importKeys: boolean,
): SshMapping {
  if (!entries) return { unmatched: [...live], imported: [] }
  const byKey = new Map<string, string>()
  for (const name of Object.keys(entries).sort()) {
    const lines = sshKeyLines(entries[name]!)
    // an entry matches a key only when it is exactly that one key
    if (lines.length === 1 && !byKey.has(lines[0]!)) byKey.set(lines[0]!, name)
  }
  const refs: string[] = []
  const unmatched: string[] = []
  const imported: { name: string; value: string }[] = []
  for (const key of live) {
    const name = byKey.get(key)
    if (name !== undefined) refs.push(name)
    else if (importKeys) {
      let adopted = adoptKeyName(key)
      if (entries[adopted] !== undefined && sshKeyLines(entries[adopted]!)[0] !== key) adopted = `${adopted}-2`
      imported.push({ name: adopted, value: key })
      refs.push(adopted)
    } else unmatched.push(key)
  }
  if (unmatched.length > 0) return { unmatched, imported: [] }
  return { refs: [...new Set(refs)].map((n) => `cloud-init.ssh-keys.${n}`), unmatched, imported }
}
