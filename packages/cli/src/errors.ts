import { formatError, type ErrorCode, type SchemaError } from '@proxops/schema'

/**
 * CliError: every failure the CLI reports is one of these, with a stable code and a one-line message
 * that names the file, field or flag at fault and says what to do. Exit code 1.
 */
export type CliErrorCode =
  | 'CONFIG_NOT_FOUND'
  | 'CONFIG_PARSE'
  | 'CONFIG_INVALID'
  | 'CONFIG_CREDENTIALS'
  | 'SECRETS'
  | 'GIT'
  | 'REPOSITORY'
  | 'PLAN_MISMATCH'
  | 'PLAN_FILE'
  | 'LOCKED'
  | 'ADOPT'
  | 'USAGE'
  | 'ABORTED'
  | 'CLUSTER_TWIN'
  | 'INSECURE_ENDPOINT'

export class CliError extends Error {
  override readonly name = 'CliError'
  constructor(
    readonly code: CliErrorCode,
    message: string,
    /** the setting at fault, when no file position says it (`pve.clusters.lab`) */
    readonly location?: { field: string },
  ) {
    super(location ? `${location.field}: ${message}` : message)
  }
}

/**
 * Problems in a repository file as one line, in `validate`'s format (`file:line:col code message`, the file
 * relative to the repository): the first problem, and how many more `validate` would list.
 */
export function problemLine(first: SchemaError, count = 1): string {
  return `${formatError(first)}${count > 1 ? ` (and ${count - 1} more; run proxops validate)` : ''}`
}

/**
 * A problem of one setting that has no position of its own (found after the files were merged, or against the
 * environment): `validate`'s format without line and column, `file code field: message`.
 */
export function settingProblem(code: ErrorCode, file: string, field: string, message: string): string {
  return problemLine({ code, file, line: 0, column: 0, message: `${field}: ${message}` })
}

/** One line: error output must never span lines (multi-line causes are joined). */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' | ').trim()
}
