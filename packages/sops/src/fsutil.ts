// Atomic replacement of a file: write `<file>.proxops-tmp`, fsync, rename. The original is untouched
// on any failure and the temporary file is removed.
import { open, readFile, rename, stat, unlink } from 'node:fs/promises'
import { SopsError } from './errors.js'

export interface AtomicWriteOptions {
  /** When given, the write is refused if the file no longer holds exactly this text. */
  expectedCurrent?: string
  /** Hook between writing the temporary file and the rename (tests inject failures here). */
  beforeRename?: (tmpPath: string) => Promise<void>
}

export function tmpPathFor(path: string): string {
  return `${path}.proxops-tmp`
}

export async function writeFileAtomic(path: string, text: string, opts: AtomicWriteOptions = {}): Promise<void> {
  const tmp = tmpPathFor(path)
  let mode = 0o600
  try {
    mode = (await stat(path)).mode & 0o777
  } catch {
    // new file: private by default
  }
  try {
    const fh = await open(tmp, 'w', mode)
    try {
      await fh.writeFile(text, 'utf8')
      await fh.sync()
    } finally {
      await fh.close()
    }
    await opts.beforeRename?.(tmp)
    if (opts.expectedCurrent !== undefined) {
      const now = await readFile(path, 'utf8')
      if (now !== opts.expectedCurrent)
        throw new SopsError('WriteFailed', path, 'the file changed while it was being updated')
    }
    await rename(tmp, path)
  } catch (e) {
    await unlink(tmp).catch(() => undefined)
    if (e instanceof SopsError) throw e
    const code = (e as { code?: unknown } | null)?.code
    throw new SopsError(
      'WriteFailed',
      path,
      `could not write (${typeof code === 'string' ? code : 'error'}); the original is untouched`,
    )
  }
}
