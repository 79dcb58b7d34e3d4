/**
 * The metric names a PromQL expression selects, for the checks that a dashboard or a rule queries only what the
 * daemon exports. A lexical reading, enough for the expressions this repository ships (each of them also passes
 * promtool's parser) and Grafana's variable queries: strings, label matchers, ranges, grouping clauses and Grafana's `$variables` are set aside,
 * then every identifier not called as a function and not a keyword is a metric name.
 */

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'atan2',
  'inf',
  'nan',
])

export function metricNames(expr: string): string[] {
  const text = expr
    // Grafana's variable query `label_values(selector, label)`: the label is not a metric
    .replace(/\blabel_values\s*\(([^,]*),\s*\w+\s*\)/g, ' $1 ')
    // Grafana's variables: `${x}`, `$x`, `[[x]]` (inside strings or ranges, which go next)
    .replace(/\$\{[^}]*\}|\$\w+|\[\[[^\]]*\]\]/g, ' ')
    // string literals (label values)
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    // label matchers, ranges and subqueries
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    // grouping and matching clauses name labels, not metrics
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
  const names = new Set<string>()
  for (const m of text.matchAll(/(?<![\w.:])([a-zA-Z_:][\w:]*)(?=\s*(\()?)/g)) {
    const name = m[1]!
    if (m[2] !== undefined || KEYWORDS.has(name.toLowerCase())) continue
    // a number's exponent or a duration's unit (1e3, 5m) never starts an identifier: the lookbehind sees the digit
    names.add(name)
  }
  return [...names].sort()
}
