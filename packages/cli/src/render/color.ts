/** ANSI colour, only when asked for (a TTY without NO_COLOR or --no-color; decided by the caller). */
export interface Paint {
  green(text: string): string
  yellow(text: string): string
  red(text: string): string
  magenta(text: string): string
  bold(text: string): string
  dim(text: string): string
}

const wrap = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`

export function paint(enabled: boolean): Paint {
  if (!enabled) {
    const id = (text: string): string => text
    return { green: id, yellow: id, red: id, magenta: id, bold: id, dim: id }
  }
  return {
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    red: wrap(31, 39),
    magenta: wrap(35, 39),
    bold: wrap(1, 22),
    dim: wrap(2, 22),
  }
}

/**
 * Colour or not, by the conventions people expect: --no-color and a non-empty NO_COLOR always win; a non-empty
 * FORCE_COLOR other than `0`/`false` turns it on even without a terminal; otherwise colour on a terminal, except
 * `TERM=dumb`.
 */
export function useColor(
  isTty: boolean,
  env: Readonly<Record<string, string | undefined>>,
  noColorFlag: boolean,
): boolean {
  if (noColorFlag || (env.NO_COLOR !== undefined && env.NO_COLOR !== '')) return false
  const force = env.FORCE_COLOR
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false'
  return isTty && env.TERM !== 'dumb'
}
