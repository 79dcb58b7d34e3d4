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
    readonly location?: { file?: string; line?: number; field?: string },
  ) {
    super(formatLocation(location) + message)
  }
}

function formatLocation(location: { file?: string; line?: number; field?: string } | undefined): string {
  if (!location) return ''
  const where = location.file ? (location.line ? `${location.file}:${location.line}` : location.file) : ''
  const parts = [where, location.field].filter((part): part is string => Boolean(part))
  return parts.length > 0 ? `${parts.join(': ')}: ` : ''
}

/** One line: error output must never span lines (multi-line causes are joined). */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' | ').trim()
}
