/**
 * JSON Schema (draft-07) of the manifest kinds, for editors: point `yaml-language-server` at
 * `packages/schema/schema/manifest.schema.json`. Generated from the same valibot schemas the loader uses
 * (input form: what users write), so it cannot drift; `pnpm --filter @proxops/schema gen` rewrites the file.
 *
 * It describes shapes, types, enums, patterns and defaults; cross-field rules (disk size vs image, slot
 * uniqueness, references between manifests, ...) are only checked by `proxops validate`.
 */
import { toJsonSchema, type JsonSchema } from '@valibot/to-json-schema'
import { API_VERSION, KINDS, kindPattern } from './kinds.js'
import { manifestSchemas } from './manifest/schemas.js'
import { nullableEmptyKeys } from './null-keys.js'

export const MANIFEST_SCHEMA_ID = 'https://proxops.dev/schema/v1alpha1/manifest.schema.json'

function kindSchema(kind: (typeof KINDS)[number]): JsonSchema {
  const schema = toJsonSchema(manifestSchemas[kind], {
    typeMode: 'input',
    errorMode: 'ignore',
  }) as Record<string, unknown>
  delete schema.$schema
  const properties = schema.properties as Record<string, Record<string, unknown>>
  properties.kind = { ...properties.kind, pattern: kindPattern([kind]) }
  // null where validate reads a key left empty (null-keys.ts)
  return nullableEmptyKeys({ title: kind, ...schema })
}

/** The JSON Schema of one manifest document of any kind (dispatching on `kind`, case-insensitively). */
export function manifestJsonSchema(): JsonSchema {
  const definitions: Record<string, JsonSchema> = {}
  for (const kind of KINDS) definitions[kind] = kindSchema(kind)
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: MANIFEST_SCHEMA_ID,
    title: 'ProxOps manifest',
    description: `A ProxOps manifest (${API_VERSION}): one of ${KINDS.join(', ')}. Generated from @proxops/schema; do not edit.`,
    type: 'object',
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    properties: {
      apiVersion: { const: API_VERSION },
      kind: {
        type: 'string',
        pattern: kindPattern(KINDS),
        description: 'Kind (case-insensitive; aliases TVM, TEMPLATE, TCT, CTT, DISK).',
      },
    },
    allOf: KINDS.map((kind) => ({
      if: { properties: { kind: { pattern: kindPattern([kind]) } }, required: ['kind'] },
      then: { $ref: `#/definitions/${kind}` },
    })),
    definitions,
  }
}
