/**
 * A config file (`proxops.yaml`, `clusters/<name>/config.yaml` or a `--config` file) as @proxops/schema
 * read and validated it: the one parser `validate` uses too. The CLI only turns its first problem into a
 * CliError that reads as `validate` prints it (`file:line:col code message`, the file relative to the
 * repository).
 */
import path from 'node:path'
import { parseConfigText, readConfigFile, type ConfigLayer, type SchemaError } from '@proxops/schema'
import { CliError, problemLine } from '../errors.js'

export interface ConfigFile {
  /** absolute path of the file (its name in messages is `layer.file`) */
  file: string
  /** settings with defaults applied, and the document as written */
  layer: ConfigLayer
  /** absolute SOPS file of each cluster it declares */
  secretsFiles: Readonly<Record<string, string>>
}

function fail(errors: readonly SchemaError[]): never {
  const first = errors[0]!
  throw new CliError(
    first.code.startsWith('yaml-') ? 'CONFIG_PARSE' : 'CONFIG_INVALID',
    problemLine(first, errors.length),
  )
}

/**
 * Parses config text (pure; tests and callers that read the file themselves). `cluster`: a cluster-local file.
 * Messages name the file as given.
 */
export function parseConfigFile(file: string, text: string, cluster?: string): ConfigFile {
  const r = parseConfigText(text, file, { dir: path.dirname(file), ...(cluster !== undefined ? { cluster } : {}) })
  if (r.errors.length > 0) fail(r.errors)
  return { file, layer: r.layer!, secretsFiles: r.secretsFiles }
}

/**
 * Reads a config file by the loader's rules (regular file, size limit, inside `root` when given); undefined
 * when it does not exist and `optional`. Messages name it relative to `root`, else as `display` (a `--config`
 * path as typed).
 */
export async function readConfig(
  file: string,
  what: string,
  options: { root?: string; cluster?: string; optional?: boolean; display?: string } = {},
): Promise<ConfigFile | undefined> {
  const r = await readConfigFile(file, {
    ...(options.root !== undefined ? { root: options.root } : { display: options.display ?? file }),
    ...(options.cluster !== undefined ? { cluster: options.cluster } : {}),
  })
  if (r.missing) {
    if (options.optional) return undefined
    const display = options.root !== undefined ? path.relative(options.root, file) : (options.display ?? file)
    const message = `cannot read ${what}: ENOENT`
    throw new CliError(
      'CONFIG_NOT_FOUND',
      problemLine({ code: 'file-unreadable', file: display, line: 0, column: 0, message }),
    )
  }
  if (r.errors.length > 0) fail(r.errors)
  return { file, layer: r.layer!, secretsFiles: r.secretsFiles }
}
