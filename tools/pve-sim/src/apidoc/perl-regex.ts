/**
 * Perl regexes from apidoc.json as JavaScript RegExps, matched the way pve-common's JSONSchema.pm does it:
 * `$value =~ m/^$pattern$/` (79 of apidoc.json's patterns use Perl syntax).
 *
 * Translations: `(?^:X)` -> `(?:X)`; `(?^i:X)` -> `(?:X)` with the whole expression case-insensitive (every
 * schema pattern that uses it is case-insensitive as a whole or already lists both cases); `{,N}` -> `{0,N}`;
 * Perl's `$` (end, or before a final newline) -> `(?=\n?$)`. No `u` flag: Perl's identity escapes (`\_`, `\@`)
 * are legal in that mode.
 */

const cache = new Map<string, RegExp>()

export function perlPatternToJs(pattern: string): { source: string; flags: string } {
  let out = ''
  let caseInsensitive = false
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string
    if (c === '\\') {
      out += c + (pattern[i + 1] ?? '')
      i++
      continue
    }
    if (inClass) {
      if (c === ']') inClass = false
      out += c
      continue
    }
    if (c === '[') {
      inClass = true
      out += c
      // a leading `]` or `^]` is literal inside a class
      if (pattern[i + 1] === '^') out += pattern[++i]
      if (pattern[i + 1] === ']') out += pattern[++i]
      continue
    }
    if (pattern.startsWith('(?^', i)) {
      const m = /^\(\?\^([a-z]*):/.exec(pattern.slice(i))
      if (m) {
        if ((m[1] ?? '').includes('i')) caseInsensitive = true
        out += '(?:'
        i += m[0].length - 1
        continue
      }
    }
    if (c === '{' && pattern[i + 1] === ',') {
      out += '{0'
      continue
    }
    if (c === '$') {
      out += '(?=\\n?$)'
      continue
    }
    out += c
  }
  return { source: out, flags: caseInsensitive ? 'i' : '' }
}

/** The anchored matcher for a schema `pattern` (cached; the schema has a few hundred distinct ones). */
export function schemaPattern(pattern: string): RegExp {
  let re = cache.get(pattern)
  if (!re) {
    const { source, flags } = perlPatternToJs(pattern)
    re = new RegExp(`^(?:${source})(?=\\n?$)`, flags)
    cache.set(pattern, re)
  }
  return re
}
