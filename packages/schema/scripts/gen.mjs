#!/usr/bin/env node
// Rewrites the generated files from the built package (run through `pnpm --filter @proxops/schema gen`,
// which builds first): schema/manifest.schema.json, config.schema.json and resources.schema.json,
// docs/schema-reference.md, the error table of docs/repository.md and src/pve-data.ts (from the repository's
// pve-data/ folder). Tests fail when any of them is out of date.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname } from 'node:path'
import {
  PVE_DATA_FILES,
  renderConfigSchema,
  renderManifestSchema,
  renderPveData,
  renderResourcesSchema,
  renderSchemaReference,
  withErrorTable,
} from '../dist/generate.js'

const at = (p) => fileURLToPath(new URL(p, import.meta.url))
const write = (path, text) => {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
  console.log(`wrote ${path}`)
}
write(at('../schema/manifest.schema.json'), renderManifestSchema())
write(at('../schema/config.schema.json'), renderConfigSchema())
write(at('../schema/resources.schema.json'), renderResourcesSchema())
write(at('../../../docs/schema-reference.md'), renderSchemaReference())
const repoDoc = at('../../../docs/repository.md')
write(repoDoc, withErrorTable(readFileSync(repoDoc, 'utf8')))
const pveData = Object.fromEntries(
  PVE_DATA_FILES.map(({ file }) => [file, readFileSync(at(`../../../pve-data/${file}`), 'utf8')]),
)
write(at('../src/pve-data.ts'), renderPveData(pveData))
