/**
 * JSON Schemas (draft-07) for editors: point `yaml-language-server` at `packages/schema/schema/manifest.schema.json`
 * (manifests), `config.schema.json` (`proxops.yaml`, `clusters/<name>/config.yaml`) or `resources.schema.json`
 * (`clusters/<name>/resources.yaml`). The first two are generated from the same valibot schemas the loader uses
 * (input form: what users write), so they cannot drift; `pnpm --filter @proxops/schema gen` rewrites the files.
 *
 * They describe shapes, types, enums, patterns and defaults; cross-field rules (disk size vs image, slot
 * uniqueness, references between manifests, ...) are only checked by `proxops validate`.
 */
import { toJsonSchema, type JsonSchema } from '@valibot/to-json-schema'
import { API_VERSION, KINDS, kindPattern } from './kinds.js'
import { manifestSchemas } from './manifest/schemas.js'
import { nullableEmptyKeys } from './null-keys.js'
import { processConfigSchema } from './config.js'

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

export const CONFIG_SCHEMA_ID = 'https://proxops.dev/schema/v1alpha1/config.schema.json'
export const RESOURCES_SCHEMA_ID = 'https://proxops.dev/schema/v1alpha1/resources.schema.json'

/** `proxops.yaml` and `clusters/<name>/config.yaml` (one shape; which keys a cluster-local file may set is validate's). */
export function configJsonSchema(): JsonSchema {
  const schema = toJsonSchema(processConfigSchema, { typeMode: 'input', errorMode: 'ignore' }) as Record<
    string,
    unknown
  >
  delete schema.$schema
  return nullableEmptyKeys({
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: CONFIG_SCHEMA_ID,
    title: 'ProxOps configuration',
    ...schema,
    description:
      'proxops.yaml (process settings) or clusters/<name>/config.yaml (one cluster entry under pve.clusters). Generated from @proxops/schema; do not edit.',
  })
}

/**
 * `clusters/<name>/resources.yaml` (loader/composition.ts reads it): a mapping with a `resources:` list of manifest
 * files relative to the cluster's directory, or that list alone; an empty file, list or entry composes nothing.
 */
export function resourcesJsonSchema(): JsonSchema {
  const entry: JsonSchema = {
    type: ['string', 'null'],
    pattern: '\\.[Yy][Aa]?[Mm][Ll]$',
    description: 'A manifest file (.yaml or .yml), relative to clusters/<name>/; an empty entry is ignored.',
  }
  const list: JsonSchema = {
    type: ['array', 'null'],
    items: entry,
    description: 'The manifest files this cluster consumes.',
  }
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: RESOURCES_SCHEMA_ID,
    title: 'ProxOps composition (resources.yaml)',
    description:
      'clusters/<name>/resources.yaml: the manifest files of one cluster. Generated from @proxops/schema; do not edit.',
    anyOf: [
      { type: 'object', additionalProperties: false, properties: { resources: list } },
      { ...list, type: 'array' },
      { type: 'null' },
    ],
  }
}
