/**
 * Generated artefacts, kept in sync by tests and rewritten by `pnpm --filter @proxops/schema gen`:
 * - `packages/schema/schema/manifest.schema.json`, `config.schema.json` and `resources.schema.json` (JSON Schemas
 *   for editors),
 * - `docs/schema-reference.md` (every kind and field with type, default and description),
 * - the error-code table inside `docs/repository.md` (between the `errors:start`/`errors:end` markers),
 * - `packages/schema/src/pve-data.ts`, the repository's `pve-data/*.json` tables as a module of this package.
 */
import { ErrorCodes } from './errors.js'
import { KIND_ALIASES, KIND_ROOT_OF, KINDS } from './kinds.js'
import { configJsonSchema, manifestJsonSchema, resourcesJsonSchema } from './json-schema.js'
import { REFERENCE_SECTIONS } from './reference-sections.js'

// The generator walks the JSON Schema tree valibot produces, which has no static type.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */
type Json = Record<string, any>

/** the PVE data tables this package compiles, one source with the simulator (pve-data/README.md) */
export const PVE_DATA_FILES = [
  { file: 'firewall.json', name: 'firewallData', type: 'FirewallData' },
  { file: 'calendar-event.json', name: 'calendarEventData', type: 'CalendarEventData' },
] as const

/** `src/pve-data.ts` from the texts of the `pve-data/` files (`texts[file]`), each embedded as it is */
export function renderPveData(texts: Readonly<Record<string, string>>): string {
  const parts = PVE_DATA_FILES.map(({ file, name, type }) => {
    const text = texts[file]
    if (text === undefined) throw new Error(`renderPveData: no text for pve-data/${file}`)
    return `/** pve-data/${file} */\nexport const ${name}: ${type} = ${text.trimEnd()}\n`
  })
  return [
    "// Generated from the repository's pve-data/ folder by `pnpm --filter @proxops/schema gen`; do not edit.",
    '// The simulator reads the same files (pve-data/README.md).',
    `import type { ${PVE_DATA_FILES.map((f) => f.type).join(', ')} } from './pve-data-types.js'`,
    '',
    parts.join('\n'),
  ].join('\n')
}

export function renderManifestSchema(): string {
  return `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`
}

export function renderConfigSchema(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`
}

export function renderResourcesSchema(): string {
  return `${JSON.stringify(resourcesJsonSchema(), null, 2)}\n`
}

/** The type of a schema node; a mapping or list that may also be null (a key left empty) counts as itself. */
function baseType(s: Json): unknown {
  return Array.isArray(s.type) ? s.type.find((t: unknown) => t !== 'null') : s.type
}

function typeOf(s: Json): string {
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``
  if (Array.isArray(s.enum)) return s.enum.map((e: unknown) => `\`${String(e)}\``).join(' | ')
  if (baseType(s) === 'string' && Array.isArray(s.examples) && s.pattern)
    return `${s.examples.map((e: unknown) => `\`${String(e)}\``).join(' | ')} (any case)`
  if (Array.isArray(s.anyOf)) {
    const types = s.anyOf.map((x: Json) => x.type)
    if (types.includes('string') && types.includes('integer') && s.anyOf.some((x: Json) => x.pattern)) return 'quantity'
    if (types.every((t: string) => ['string', 'number', 'boolean'].includes(t))) return 'scalar'
    return s.anyOf.map(typeOf).join(' | ')
  }
  if (baseType(s) === 'array') return `list of ${s.items ? typeOf(s.items) : 'any'}`
  if (baseType(s) === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object')
    return `map of ${typeOf(s.additionalProperties)}`
  if (baseType(s) === 'object') return 'mapping'
  if (baseType(s) === 'integer') return 'integer'
  return String(baseType(s) ?? 'any')
}

function rangeOf(s: Json): string {
  const parts: string[] = []
  if (s.minimum !== undefined && s.maximum !== undefined) parts.push(`${s.minimum}–${s.maximum}`)
  else if (s.minimum !== undefined) parts.push(`≥ ${s.minimum}`)
  else if (s.maximum !== undefined) parts.push(`≤ ${s.maximum}`)
  return parts.length ? ` (${parts.join(', ')})` : ''
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ')
}

function rows(schema: Json, prefix: string, out: string[]): void {
  const props = (schema.properties ?? {}) as Record<string, Json>
  const required = new Set<string>(schema.required ?? [])
  for (const [key, prop] of Object.entries(props)) {
    const path = prefix ? `${prefix}.${key}` : key
    const def = prop.default === undefined ? '' : `\`${JSON.stringify(prop.default)}\``
    const desc = typeof prop.description === 'string' ? prop.description : ''
    const type = key === 'kind' && path === 'kind' ? 'string' : `${typeOf(prop)}${rangeOf(prop)}`
    out.push(`| \`${path}\` | ${cell(type)} | ${required.has(key) ? 'yes' : ''} | ${def} | ${cell(desc)} |`)
    if (baseType(prop) === 'object' && prop.properties) rows(prop, path, out)
    if (baseType(prop) === 'array' && prop.items?.type === 'object' && prop.items.properties)
      rows(prop.items, `${path}[]`, out)
  }
}

export function renderSchemaReference(): string {
  const schema = manifestJsonSchema() as Json
  const out: string[] = [
    '# Manifest schema reference',
    '',
    '<!-- Generated by `pnpm --filter @proxops/schema gen` from packages/schema (valibot schemas); do not edit by hand. -->',
    '',
    'Every manifest is one YAML document with `apiVersion: proxops/v1alpha1`, a `kind`, `metadata` and `spec`.',
    '`kind` is case-insensitive and accepts aliases. Unknown fields are rejected (typos never pass silently).',
    '',
    'Types: **quantity** is an integer with an optional, case-insensitive unit: `B`, decimal `K`/`KB`, `M`/`MB`,',
    '`G`/`GB`, `T`/`TB`, `P`/`PB` (powers of 1000) or binary `Ki`/`KiB` ... `Pi`/`PiB` (powers of 1024); a bare YAML',
    'number counts bytes. Memory, swap and disk sizes must be a whole number of MiB, so write `8GiB`, not `8G`.',
    '**scalar** is a string, number or boolean (sent as a string). Fields without a default that are absent are',
    '*not owned*: ProxOps never writes them and never reports drift on them. A mapping or list key with nothing under',
    'it (every child commented out) reads as if it were left out, or as empty where it is required',
    '([repository](repository.md#keys-left-empty)).',
    '',
    'Editors: `# yaml-language-server: $schema=<path to packages/schema/schema/manifest.schema.json>` at the top of',
    'a manifest (or a `yaml.schemas` setting) gives completion and checks while typing. `proxops validate` runs',
    'every rule, including those across fields and files.',
    '',
    '| Kind | Aliases | Directory |',
    '| --- | --- | --- |',
    ...KINDS.map(
      (k) =>
        `| [${k}](#${k.toLowerCase()}) | ${
          KIND_ALIASES[k]
            .filter((a) => a !== k)
            .map((a) => `\`${a}\``)
            .join(', ') || '–'
        } | \`${KIND_ROOT_OF[k]}/\` |`,
    ),
    '',
    `Fields that manage a PVE object beside the guest: ${REFERENCE_SECTIONS.map((s) => `[${s.title}](#${s.anchor})`).join(', ')}.`,
    '',
  ]
  for (const kind of KINDS) {
    const def = schema.definitions[kind] as Json
    out.push(
      `## ${kind}`,
      '',
      String(def.description ?? ''),
      '',
      '| Field | Type | Required | Default | Description |',
      '| --- | --- | --- | --- | --- |',
    )
    rows(def, '', out)
    out.push('')
  }
  for (const section of REFERENCE_SECTIONS) out.push(`## ${section.title}`, '', ...section.lines, '')
  return `${out.join('\n').replace(/\n+$/, '')}\n`
}

export function renderErrorTable(): string {
  const lines = ['| Code | Meaning |', '| --- | --- |']
  for (const [code, meaning] of Object.entries(ErrorCodes)) lines.push(`| \`${code}\` | ${cell(meaning)} |`)
  return lines.join('\n')
}

export const ERRORS_START = '<!-- errors:start (generated by `pnpm --filter @proxops/schema gen`) -->'
export const ERRORS_END = '<!-- errors:end -->'

/** Replaces the generated error table inside docs/repository.md. */
export function withErrorTable(markdown: string): string {
  const start = markdown.indexOf(ERRORS_START)
  const end = markdown.indexOf(ERRORS_END)
  if (start < 0 || end < start) throw new Error('docs/repository.md lacks the errors:start / errors:end markers')
  return `${markdown.slice(0, start + ERRORS_START.length)}\n${renderErrorTable()}\n${markdown.slice(end)}`
}
