// The ProxOps credential document (reference behaviour 7.1) and cloud-init references (7.4):
//   secrets:     flat name -> scalar (PVE user, token id, token, password, git token)
//   cloud-init:  ssh-keys: name -> one OpenSSH public-key line; passwords: name -> password
// Values are trimmed and an empty value counts as missing. Errors name cluster, file, key and field.
import { type DecryptOptions, decryptSopsFile } from './decrypt.js'
import type { DecryptedDocument, PlainNode } from './document.js'
import { SopsError } from './errors.js'
import { Secret } from './secret.js'

export type CloudInitKind = 'ssh-keys' | 'passwords'

export interface CloudInitRef {
  kind: CloudInitKind
  name: string
}

/** `secrets.<name>`, the form a manifest names a credential in (Storage `password-ref`, ...) */
const SECRETS_REF_RE = /^secrets\.([a-z0-9][a-z0-9-]{0,63})$/

const REF_RE = /^cloud-init\.(ssh-keys|passwords)\.([a-z0-9][a-z0-9-]{0,63})$/

/** Parses `cloud-init.ssh-keys.<name>` / `cloud-init.passwords.<name>`; undefined when invalid. */
export function parseCloudInitRef(ref: string): CloudInitRef | undefined {
  const m = REF_RE.exec(ref)
  return m ? { kind: m[1] as CloudInitKind, name: m[2] as string } : undefined
}

export interface CredentialsOptions {
  /** Cluster name, for error messages. */
  cluster?: string
}

type Block = Map<string, Secret<string>>

export class SopsCredentials {
  readonly file: string
  readonly cluster: string | undefined
  readonly #secrets: Block
  readonly #cloudInit: Record<CloudInitKind, Block>

  constructor(file: string, cluster: string | undefined, secrets: Block, cloudInit: Record<CloudInitKind, Block>) {
    this.file = file
    this.cluster = cluster
    this.#secrets = secrets
    this.#cloudInit = cloudInit
  }

  #prefix(): string {
    return this.cluster ? `cluster ${this.cluster}: ` : ''
  }

  /** Names under `secrets:` (in file order, empty values included). */
  get secretNames(): string[] {
    return [...this.#secrets.keys()]
  }

  names(kind: CloudInitKind): string[] {
    return [...this.#cloudInit[kind].keys()]
  }

  /** A value under `secrets:`, or undefined when missing or empty. */
  secret(name: string): Secret<string> | undefined {
    const s = this.#secrets.get(name)
    return s && s.reveal() !== '' ? s : undefined
  }

  /** A value under `secrets:` that must be present; `field` is the config field that references it. */
  requireSecret(name: string, field: string): Secret<string> {
    const s = this.secret(name)
    if (!s)
      throw new SopsError(
        'MissingKey',
        this.file,
        `${this.#prefix()}key "${name}" (referenced by ${field}) is missing or empty`,
        {
          path: ['secrets', name],
        },
      )
    return s
  }

  cloudInit(kind: CloudInitKind, name: string): Secret<string> | undefined {
    const s = this.#cloudInit[kind].get(name)
    return s && s.reveal() !== '' ? s : undefined
  }

  /** Resolves a manifest reference; a missing or empty entry fails, naming the reference. */
  resolveRef(ref: string): Secret<string> {
    // `secrets.<name>`: a credential a manifest names (a storage's password, keyring or PBS key)
    const named = SECRETS_REF_RE.exec(ref)
    if (named) {
      const name = named[1] as string
      const s = this.secret(name)
      if (!s)
        throw new SopsError('MissingKey', this.file, `${this.#prefix()}reference ${ref} is missing or empty`, {
          path: ['secrets', name],
        })
      return s
    }
    const parsed = parseCloudInitRef(ref)
    if (!parsed) throw new SopsError('Malformed', this.file, `${this.#prefix()}invalid cloud-init reference "${ref}"`)
    const s = this.cloudInit(parsed.kind, parsed.name)
    if (!s)
      throw new SopsError('MissingKey', this.file, `${this.#prefix()}reference ${ref} is missing or empty`, {
        path: ['cloud-init', parsed.kind, parsed.name],
      })
    return s
  }

  toString(): string {
    return `SopsCredentials(${this.file})`
  }
  toJSON(): string {
    return this.toString()
  }
}

function flatBlock(node: PlainNode | undefined, path: string[], file: string, prefix: string): Block {
  const out: Block = new Map()
  if (node === undefined || node.kind === 'null') return out
  if (node.kind !== 'map') throw new SopsError('Malformed', file, `${prefix}must be a mapping`, { path })
  for (const [key, value] of node.entries) {
    if (value.kind === 'null') out.set(key, new Secret('', 'str'))
    else if (value.kind === 'leaf')
      out.set(key, new Secret(value.secret.revealString().trim(), 'str', value.secret.encrypted))
    else throw new SopsError('Malformed', file, `${prefix}value must be a scalar`, { path: [...path, key] })
  }
  return out
}

/** Reads and checks the credential shape of a decrypted document. */
export function readCredentials(doc: DecryptedDocument, opts: CredentialsOptions = {}): SopsCredentials {
  const prefix = opts.cluster ? `cluster ${opts.cluster}: ` : ''
  const secretsNode = doc.node(['secrets'])
  const cloudInitNode = doc.node(['cloud-init'])
  if (cloudInitNode !== undefined && cloudInitNode.kind !== 'map' && cloudInitNode.kind !== 'null')
    throw new SopsError('Malformed', doc.file, `${prefix}cloud-init must be a mapping`, { path: ['cloud-init'] })
  const secrets = flatBlock(secretsNode, ['secrets'], doc.file, prefix)
  const cloudInit = {
    'ssh-keys': flatBlock(doc.node(['cloud-init', 'ssh-keys']), ['cloud-init', 'ssh-keys'], doc.file, prefix),
    passwords: flatBlock(doc.node(['cloud-init', 'passwords']), ['cloud-init', 'passwords'], doc.file, prefix),
  }
  const hasSecrets = secretsNode?.kind === 'map'
  if (!hasSecrets && cloudInit['ssh-keys'].size === 0 && cloudInit.passwords.size === 0)
    throw new SopsError(
      'Malformed',
      doc.file,
      `${prefix}the document has neither a secrets mapping nor a non-empty cloud-init block`,
    )
  return new SopsCredentials(doc.file, opts.cluster, secrets, cloudInit)
}

/** Decrypts a cluster's secrets file and reads its credential document in one step. */
export async function loadCredentials(
  path: string,
  opts: Omit<DecryptOptions, 'file'> & CredentialsOptions,
): Promise<SopsCredentials> {
  const { cluster, ...decrypt } = opts
  return readCredentials(await decryptSopsFile(path, decrypt), cluster === undefined ? {} : { cluster })
}
