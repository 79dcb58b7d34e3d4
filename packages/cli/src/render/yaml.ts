/**
 * `--output yaml`: the same document as `--output json`, as YAML (kubectl's `-o yaml`). Made from the JSON text, so
 * both always hold the same fields in the same order, already redacted.
 */
import { stringify } from 'yaml'

export function yamlOf(json: string): string {
  return stringify(JSON.parse(json) as unknown, { indent: 2, lineWidth: 0 })
}

/** The structured output of a command in the format asked for. */
export function structured(json: string, format: 'json' | 'yaml'): string {
  return format === 'yaml' ? yamlOf(json) : json
}
