/**
 * The one sanitiser for text ProxOps did not write (PVE's messages and error texts, names, notes, tags, commit
 * subjects, manifest strings) before a terminal, a log line or a page shows it. A hostile PVE, or anything in front
 * of it, could otherwise retitle or clear the operator's terminal, hide lines or reorder what a reader sees.
 *
 * Unsafe are the C0 controls (ESC starts every ESC, CSI and OSC sequence; BEL ends an OSC; CR overwrites a line),
 * DEL, the C1 controls (U+009B is a one-character CSI, U+009D an OSC), the line and paragraph separators, and the
 * bidirectional marks, embeddings, overrides and isolates. Each is written as a JSON escape (`\u001b`), so a JSON
 * text stays the same JSON value, and a person still sees that something was there. See docs/safety.md.
 */

// eslint-disable-next-line no-control-regex -- finding control characters is this module's job
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
const LINE_BREAKS = /[\r\n\u2028\u2029]+/g
/** exactly what render/color.ts writes: bold, dim, their reset, four colours and the colour reset */
// eslint-disable-next-line no-control-regex -- ESC starts the colour sequences it lets through
const OWN_SGR = /^\u001b\[(?:1|2|22|31|32|33|35|39)m/

const escape = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`

/** Free text on one line: line breaks become a space (a newline must not forge a line), other unsafe characters escapes. */
export function safeLine(text: string): string {
  return text.replace(LINE_BREAKS, ' ').replace(UNSAFE, escape)
}

/** Text whose format has lines (a page's paragraph, a report): newlines and tabs stay, every other unsafe character is escaped. */
export function safeLines(text: string): string {
  return text.replace(UNSAFE, (char) => (char === '\n' || char === '\t' ? char : escape(char)))
}

/** Every string of a plain value through `safeLines` (a document before a template shows it). */
export function safeValue<T>(value: T): T {
  if (typeof value === 'string') return safeLines(value) as T
  if (Array.isArray(value)) return value.map(safeValue) as T
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [safeLines(key), safeValue(item)])) as T
}

/**
 * What reaches stdout or stderr: `safeLines`, except ProxOps' own colour sequences (render/color.ts), which pass.
 * A JSON text keeps its value (its strings hold no raw newline or tab, and an escape means the same character).
 */
export function safeOutput(text: string): string {
  if (!text.includes('\u001b')) return safeLines(text)
  let out = ''
  let from = 0
  for (let at = text.indexOf('\u001b'); at >= 0; at = text.indexOf('\u001b', at + 1)) {
    const own = OWN_SGR.exec(text.slice(at, at + 5))
    if (!own) continue
    out += safeLines(text.slice(from, at)) + own[0]
    from = at + own[0].length
    at = from - 1
  }
  return out + safeLines(text.slice(from))
}
