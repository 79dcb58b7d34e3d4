/**
 * A config file (`proxops.yaml`, `clusters/<name>/config.yaml` or a `--config` file) as @proxops/schema
 * read and validated it: the one parser `validate` uses too. The CLI only turns its first problem into a
 * CliError naming the file, line and field.
 */
import path from 'node:path'
import { parseConfigText, readConfigFile, type ConfigLayer, type SchemaError } from '@proxops/schema'
import { CliError } from '../errors.js'

export interface ConfigFile {
  /** absolute path of the file */
  file: string
  /** settings with defaults applied, and the document as written */
  layer: ConfigLayer
  /** absolute SOPS file of each cluster it declares */
  secretsFiles: Readonly<Record<string, string>>
}

function fail(error: SchemaError): never {
  const code = error.code.startsWith('yaml-') ? 'CONFIG_PARSE' : 'CONFIG_INVALID'
  throw new CliError(code, code === 'CONFIG_PARSE' ? `malformed YAML: ${error.message}` : error.message, {
    file: error.file,
    ...(error.line ? { line: error.line } : {}),
  })
}

/** Parses config text (pure; tests and callers that read the file themselves). `cluster`: a cluster-local file. */
export function parseConfigFile(file: string, text: string, cluster?: string): ConfigFile {
  const r = parseConfigText(text, file, { dir: path.dirname(file), ...(cluster !== undefined ? { cluster } : {}) })
  if (r.errors[0]) fail(r.errors[0])
  return { file, layer: r.layer!, secretsFiles: r.secretsFiles }
}

/**
 * Reads a config file by the loader's rules (regular file, size limit, inside `root` when given); undefined
 * when it does not exist and `optional`.
 */
export async function readConfig(
  file: string,
  what: string,
  options: { root?: string; cluster?: string; optional?: boolean } = {},
): Promise<ConfigFile | undefined> {
  const r = await readConfigFile(file, {
    display: file,
    ...(options.root !== undefined ? { root: options.root } : {}),
    ...(options.cluster !== undefined ? { cluster: options.cluster } : {}),
  })
  if (r.missing) {
    if (options.optional) return undefined
    throw new CliError('CONFIG_NOT_FOUND', `cannot read ${what}: ENOENT`, { file })
  }
  if (r.errors[0]) fail(r.errors[0])
  return { file, layer: r.layer!, secretsFiles: r.secretsFiles }
}
