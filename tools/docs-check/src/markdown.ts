/**
 * Pure Markdown helpers for the docs checks: fenced code blocks (with their info strings), relative links, and the
 * commands of a shell block with their expectations. Only the CommonMark subset our docs use is read.
 */

export interface FencedBlock {
  /** the info string after the opening fence, trimmed (e.g. "sh runnable") */
  info: string
  /** the info string's words: language first, then attributes such as "runnable" */
  words: string[]
  body: string
  /** 1-based line of the opening fence */
  line: number
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/

/** Every fenced code block of a Markdown text, in order. An unclosed fence runs to the end (as CommonMark says). */
export function fencedBlocks(text: string): FencedBlock[] {
  const lines = text.split(/\r?\n/)
  const blocks: FencedBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? '')
    if (!open) continue
    const fence = open[1] as string
    const info = (open[2] ?? '').trim()
    // a backtick fence's info string may not contain a backtick (it would be inline code)
    if (fence[0] === '`' && info.includes('`')) continue
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(lines[j] ?? '')
      if (close && (close[1] as string)[0] === fence[0] && (close[1] as string).length >= fence.length) break
      body.push(lines[j] ?? '')
    }
    blocks.push({ info, words: info.split(/\s+/).filter(Boolean), body: body.join('\n'), line: i + 1 })
    i = j
  }
  return blocks
}

/** The blocks marked runnable: a shell language and the word "runnable" in the info string. */
export function runnableBlocks(text: string): FencedBlock[] {
  return fencedBlocks(text).filter(
    (b) => ['sh', 'bash', 'shell'].includes(b.words[0] ?? '') && b.words.includes('runnable'),
  )
}

export interface Link {
  /** the target as written, without a #fragment or title */
  target: string
  line: number
}

/** Lines that are inside fenced code blocks (1-based), so links in code are ignored. */
function codeLines(text: string): Set<number> {
  const inCode = new Set<number>()
  for (const b of fencedBlocks(text)) {
    const n = b.body === '' ? 0 : b.body.split('\n').length
    for (let k = 0; k <= n + 1; k++) inCode.add(b.line + k)
  }
  return inCode
}

/** Links that point into this repository: inline links, images and reference definitions; no URLs, no pure anchors. */
export function relativeLinks(text: string): Link[] {
  const inCode = codeLines(text)
  const links: Link[] = []
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1
    if (inCode.has(line)) return
    const withoutCode = raw.replace(/`+[^`]*`+/g, '')
    const targets: string[] = []
    for (const m of withoutCode.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1] as string)
    const ref = /^ {0,3}\[[^\]]+\]:\s*(\S+)/.exec(withoutCode)
    if (ref) targets.push(ref[1] as string)
    for (let target of targets) {
      if (target.startsWith('<') && target.endsWith('>')) target = target.slice(1, -1)
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#') || target.startsWith('//')) continue
      const path = decodeURI(target.split('#')[0] as string)
      if (path !== '') links.push({ target: path, line })
    }
  })
  return links
}

export interface Anchor {
  /** the file part, '' for a link within the same page */
  target: string
  fragment: string
  line: number
}

/** Links with a #fragment (same page or another relative file); URLs are left out. */
export function anchorLinks(text: string): Anchor[] {
  const inCode = codeLines(text)
  const anchors: Anchor[] = []
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1
    if (inCode.has(line)) return
    const withoutCode = raw.replace(/`+[^`]*`+/g, '')
    for (const m of withoutCode.matchAll(/\]\(\s*<?([^)\s>]*#[^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const [target, fragment] = (m[1] as string).split('#') as [string, string]
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue
      anchors.push({ target: decodeURI(target), fragment: decodeURIComponent(fragment), line })
    }
  })
  return anchors
}

/** GitHub's anchor for a heading text: inline markup dropped, lower case, punctuation removed, spaces to '-'. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-')
}

/** The anchors of a page's ATX headings, numbered like GitHub when a slug repeats (x, x-1, x-2). */
export function headingAnchors(text: string): Set<string> {
  const inCode = codeLines(text)
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  text.split(/\r?\n/).forEach((raw, index) => {
    if (inCode.has(index + 1)) return
    const m = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(raw)
    if (!m) return
    const base = slug(m[1] as string)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  })
  return anchors
}

export interface Command {
  /** the shell text to run: one line, or several joined by backslash continuations or a here-document */
  text: string
  /** 1-based line inside the block where the command starts */
  line: number
  /** expected exit status (default 0) */
  exit: number
  /** strings the command's stdout+stderr must contain */
  contains: string[]
}

/**
 * The comment at the end of a shell line, outside quotes, or undefined. `#` starts a comment only at the start of a
 * word, as in sh.
 */
export function trailingComment(line: string): string | undefined {
  let quote: string | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string
    if (quote) {
      if (c === '\\' && quote === '"') i++
      else if (c === quote) quote = undefined
      continue
    }
    if (c === '\\') i++
    else if (c === '"' || c === "'") quote = c
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] as string))) return line.slice(i + 1)
  }
  return undefined
}

/** Reads the expectations from a trailing comment: `exit N` and double-quoted strings that must be in the output. */
export function parseExpectations(comment: string | undefined): { exit: number; contains: string[] } {
  if (comment === undefined) return { exit: 0, contains: [] }
  const exit = /(?:^|\s)exits?\s+(\d+)\b/.exec(comment)
  const contains = [...comment.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string)
  return { exit: exit ? Number(exit[1]) : 0, contains }
}

/** Splits a shell block into commands: comment lines and blank lines are dropped; continuations and here-documents are kept whole. */
export function splitCommands(body: string): Command[] {
  const lines = body.split('\n')
  const commands: Command[] = []
  for (let i = 0; i < lines.length; i++) {
    const first = lines[i] as string
    if (first.trim() === '' || first.trim().startsWith('#')) continue
    const start = i
    const parts = [first]
    while (/\\$/.test(parts[parts.length - 1] as string) && i + 1 < lines.length) parts.push(lines[++i] as string)
    const head = parts.join('\n')
    const heredoc = /<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1/.exec(head)
    if (heredoc) {
      const word = heredoc[2] as string
      while (i + 1 < lines.length) {
        const next = lines[++i] as string
        parts.push(next)
        if (next.trim() === word) break
      }
    }
    // expectations come from the first line's comment (or the last continuation line's)
    const lastHeadLine = head.split('\n').pop() as string
    const expectations = parseExpectations(trailingComment(lastHeadLine) ?? trailingComment(first))
    commands.push({ text: parts.join('\n'), line: start + 1, ...expectations })
  }
  return commands
}
