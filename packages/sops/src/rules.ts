// Which leaves sops encrypts (sops.go shouldBeEncrypted), for the four path-based rules.
export type CryptRule =
  | { kind: 'unencrypted_suffix'; value: string }
  | { kind: 'encrypted_suffix'; value: string }
  | { kind: 'unencrypted_regex'; value: string }
  | { kind: 'encrypted_regex'; value: string }

export const DEFAULT_RULE: CryptRule = { kind: 'unencrypted_suffix', value: '_unencrypted' }
export const RULE_KINDS = ['unencrypted_suffix', 'encrypted_suffix', 'unencrypted_regex', 'encrypted_regex'] as const

export type PathPredicate = (path: readonly string[]) => boolean

/**
 * Compiles a rule to a predicate over key paths. Go's regexp.Match is unanchored, like RegExp.test;
 * a leading `(?i)` (common in Go patterns, unknown to JS) becomes the `i` flag. Throws a plain Error
 * (with the pattern, which is public metadata) when JS cannot compile the pattern.
 */
export function compileRule(rule: CryptRule): PathPredicate {
  switch (rule.kind) {
    case 'unencrypted_suffix':
      return (path) => !path.some((p) => p.endsWith(rule.value))
    case 'encrypted_suffix':
      return (path) => path.some((p) => p.endsWith(rule.value))
    case 'unencrypted_regex': {
      const re = goRegExp(rule.value)
      return (path) => !path.some((p) => re.test(p))
    }
    case 'encrypted_regex': {
      const re = goRegExp(rule.value)
      return (path) => path.some((p) => re.test(p))
    }
  }
}

function goRegExp(pattern: string): RegExp {
  const m = /^\(\?i\)/.exec(pattern)
  return new RegExp(m ? pattern.slice(4) : pattern, m ? 'iu' : 'u')
}
