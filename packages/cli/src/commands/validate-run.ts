/** validate's checks and their output (validate.ts holds the command, and loads this module when it runs). */
import path from 'node:path'
import {
  discoverRepository,
  formatError,
  loadRepository,
  sortErrors,
  type LoadedCluster,
  type RepositoryModel,
  type SchemaError,
} from '@proxops/schema'
import type { ValidateHooks } from './validate.js'

export interface ValidateOptions {
  /** explicit repository root (--git-path / PROXOPS_GIT_PATH): used as is, no upward discovery */
  gitPath?: string
  cluster?: string
  output: 'text' | 'json'
  /** unlisted manifest files (and their problems) are errors, not warnings */
  strict?: boolean
  cwd: string
  hooks?: ValidateHooks
}

export interface ValidateResult {
  exitCode: 0 | 1
  stdout: string
  /** the one error line of a failed validation, `proxops: error: ...` as every command ends (empty when valid) */
  stderr: string
}

const FORMAT_VERSION = 1

/** Runs the validation and renders its output (no I/O besides reading the repository). */
export async function runValidate(options: ValidateOptions): Promise<ValidateResult> {
  let root: string
  if (options.gitPath !== undefined) {
    root = path.resolve(options.cwd, options.gitPath)
  } else {
    const found = await discoverRepository(options.cwd)
    if (!found.ok) {
      const error: SchemaError = { code: 'repo-not-found', file: '.', line: 0, column: 0, message: found.message }
      return render(options.output, undefined, [error], [], [])
    }
    root = found.root
  }
  const model = await loadRepository({
    root,
    unlisted: true,
    ...(options.cluster !== undefined ? { cluster: options.cluster } : {}),
  })
  const extra: SchemaError[] = []
  if (options.hooks?.checkCluster) {
    for (const cluster of model.clusters) {
      for (const e of await options.hooks.checkCluster(cluster, model))
        extra.push({ ...e, clusters: e.clusters ?? [cluster.name] })
    }
  }
  const noticed = sortErrors(model.unlisted.flatMap((u) => [unlistedError(u.file), ...u.errors]))
  const errors = sortErrors([...model.errors, ...extra, ...(options.strict ? noticed : [])])
  return render(options.output, model, errors, model.clusters, options.strict ? [] : noticed)
}

function unlistedError(file: string): SchemaError {
  return {
    code: 'manifest-unlisted',
    file,
    line: 0,
    column: 0,
    message: `${file} is listed in no clusters/<name>/resources.yaml, so no cluster manages it: list it or remove it`,
  }
}

function render(
  output: 'text' | 'json',
  model: RepositoryModel | undefined,
  errors: SchemaError[],
  clusters: readonly LoadedCluster[],
  warnings: SchemaError[],
): ValidateResult {
  const exitCode = errors.length > 0 ? 1 : 0
  const failing = (c: LoadedCluster) =>
    errors.some((e) => !e.clusters || e.clusters.length === 0 || e.clusters.includes(c.name))
  if (output === 'json') {
    const doc = {
      format_version: FORMAT_VERSION,
      valid: errors.length === 0,
      root: model?.root ?? null,
      clusters: clusters.map((c) => ({
        name: c.name,
        valid: !failing(c),
        files: c.files.length,
        resources: c.index.resources.length,
        kinds: countKinds(c),
      })),
      errors: errors.map(jsonError),
      warnings: warnings.map(jsonError),
    }
    const stderr =
      errors.length > 0
        ? `proxops: error: ${errors.length === 1 && !model ? errors[0]!.message : 'the repository is not valid (see errors)'}\n`
        : ''
    return { exitCode, stdout: `${JSON.stringify(doc, null, 2)}\n`, stderr }
  }
  const lines: string[] = [
    ...warnings.map((e) => `warning: ${formatError(e)}`),
    ...errors.map(
      (e) =>
        formatError(e) +
        (e.clusters && e.clusters.length > 0 && clusters.length > 1 ? ` [${e.clusters.join(', ')}]` : ''),
    ),
  ]
  if (errors.length > 0) {
    // the problems are the output; the verdict is the error line every failing command ends with
    const repoMissing = !model && errors.length === 1 ? errors[0] : undefined
    if (repoMissing) return { exitCode, stdout: '', stderr: `proxops: error: ${repoMissing.message}\n` }
    const verdict = `${errors.length} problem${errors.length === 1 ? '' : 's'} in ${model?.root ?? 'the repository'} (listed above)`
    return { exitCode, stdout: `${lines.join('\n')}\n`, stderr: `proxops: error: ${verdict}\n` }
  } else {
    for (const c of clusters) {
      const kinds = Object.entries(countKinds(c))
        .map(([k, n]) => `${n} ${k}`)
        .join(', ')
      lines.push(
        `${c.name}: valid, ${c.index.resources.length} resource${c.index.resources.length === 1 ? '' : 's'} from ${c.files.length} file${c.files.length === 1 ? '' : 's'}${kinds ? ` (${kinds})` : ''}`,
      )
    }
  }
  return { exitCode, stdout: `${lines.join('\n')}\n`, stderr: '' }
}

function jsonError(e: SchemaError) {
  return {
    code: e.code,
    file: e.file,
    line: e.line,
    column: e.column,
    message: e.message,
    ...(e.field ? { field: e.field } : {}),
    ...(e.clusters?.length ? { clusters: e.clusters } : {}),
  }
}

function countKinds(c: LoadedCluster): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const r of c.index.resources) counts[r.manifest.kind] = (counts[r.manifest.kind] ?? 0) + 1
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : 1)))
}
