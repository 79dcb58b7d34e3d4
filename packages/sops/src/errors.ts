// Coded errors. Messages name the file and, where useful, the key path (key names are plaintext in
// sops files); they never carry decrypted values, data keys or identities.

export type SopsErrorCode =
  | 'NotEncrypted' // a plaintext file: no `sops` metadata
  | 'NoIdentity' // no age identity could be found or loaded
  | 'IdentityMismatch' // identities found, none matches the file's recipients
  | 'MacMismatch' // a value, the MAC or lastmodified failed authentication
  | 'Malformed' // not a well-formed sops document (or bad input to encrypt)
  | 'Unsupported' // PGP/KMS-only, several key groups, comment-regex rules, aliases…
  | 'MissingKey' // a looked-up credential or reference is missing or empty
  | 'WriteFailed' // an update could not be written (original untouched)

export class SopsError extends Error {
  override readonly name = 'SopsError'
  readonly code: SopsErrorCode
  readonly file: string
  /** Key path (plaintext key names) the error is about, when there is one. */
  readonly path: readonly string[] | undefined
  /** Public age recipients of the file (IdentityMismatch only). */
  readonly recipients: readonly string[] | undefined

  constructor(
    code: SopsErrorCode,
    file: string,
    detail: string,
    extra: { path?: readonly string[]; recipients?: readonly string[]; cause?: unknown } = {},
  ) {
    const where = extra.path && extra.path.length > 0 ? ` at ${formatPath(extra.path)}` : ''
    super(`${file}: ${code}: ${detail}${where}`)
    this.code = code
    this.file = file
    this.path = extra.path ? [...extra.path] : undefined
    this.recipients = extra.recipients ? [...extra.recipients] : undefined
    // Only attach causes that are themselves SopsErrors: foreign errors may quote plaintext.
    if (extra.cause instanceof SopsError) (this as { cause?: unknown }).cause = extra.cause
  }
}

export function isSopsError(e: unknown, code?: SopsErrorCode): e is SopsError {
  return e instanceof SopsError && (code === undefined || e.code === code)
}

/** `a.b.c`, with components that contain dots or are empty shown quoted. */
export function formatPath(path: readonly string[]): string {
  if (path.length === 0) return '(root)'
  return path.map((p) => (/^[^.\s"]+$/.test(p) ? p : JSON.stringify(p))).join('.')
}

/**
 * Runs a public entry point so that every failure is a SopsError: foreign errors (which might quote
 * plaintext) are replaced by a coded one that keeps only their class name.
 */
export async function guarded<T>(file: string, code: SopsErrorCode, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (e) {
    if (e instanceof SopsError) throw e
    throw new SopsError(code, file, `unexpected ${e instanceof Error ? e.name : 'error'}`)
  }
}
