/**
 * adopt --cluster X: PVE -> YAML through the read-only client. Writes `<kind>/<cluster>/<name>.yaml`
 * under the repository root, never overwriting a different file without --force; prints gaps, INCOMPLETE and
 * SKIPPED lists and the lines for resources.yaml. --adopt-secrets merges unmatched SSH keys into the
 * cluster's SOPS file through @proxops/sops (atomic, existing names never overwritten).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { stringify } from 'yaml'
import { adopt, observe } from '@proxops/planner'
import { isSopsError, mergeSopsFile } from '@proxops/sops'
import { CliError } from '../errors.js'
import { readOnlyClient } from '../runtime/clients.js'
import { out, type CliContext } from '../runtime/context.js'
import { loadDraftConfig } from '../config/load.js'
import { globalFlags, prepare, type GlobalArgs } from './common.js'

export interface AdoptArgs extends GlobalArgs {
  cluster?: string
  force?: boolean
  'adopt-secrets'?: boolean
}

export function manifestYaml(document: Record<string, unknown>): string {
  return stringify(document, { indent: 2, lineWidth: 0, sortMapEntries: false })
}

export async function adoptHandler(ctx: CliContext, args: AdoptArgs): Promise<number> {
  if (args.cluster === undefined) {
    // name the configured clusters in the error, as the reference does
    let known: string[] = []
    try {
      known = (
        await loadDraftConfig({ flags: globalFlags(args), env: ctx.env, cwd: ctx.cwd, home: ctx.home })
      ).clusters.map((c) => c.name)
    } catch {
      // the message below is still the actionable one
    }
    throw new CliError(
      'USAGE',
      `adopt requires an explicit --cluster=<name>; configured clusters: [${known.join(', ')}]`,
    )
  }
  const prepared = await prepare(ctx, args, { cluster: args.cluster })
  const cluster = prepared.config.clusters[0]
  if (!cluster) throw new CliError('USAGE', `--cluster "${args.cluster}" is not configured`)
  const sops = prepared.sops.get(cluster.name)
  if (args['adopt-secrets'] && (!sops || !cluster.secretsFile)) {
    throw new CliError('ADOPT', `--adopt-secrets needs a secrets-file for cluster ${cluster.name}`)
  }
  const reader = readOnlyClient(cluster, prepared.config, { log: ctx.log })
  let result
  try {
    const inventory = await observe(cluster.name, reader, { nodes: cluster.nodes, signal: ctx.signal })
    const sshKeys = sops
      ? Object.fromEntries(sops.names('ssh-keys').map((n) => [n, sops.cloudInit('ssh-keys', n)?.reveal() ?? '']))
      : undefined
    result = adopt(inventory, {
      cluster: cluster.name,
      ...(sshKeys ? { sshKeys } : {}),
      importSshKeys: Boolean(args['adopt-secrets']),
    })
  } finally {
    await reader.close()
  }
  const lines: string[] = [`adopt: cluster ${cluster.name} (read-only)`]
  if (result.files.length === 0 && result.skipped.length === 0) {
    out(ctx, `${lines[0]}\nadopt: no objects to adopt\n`)
    return 0
  }
  const root = prepared.config.root
  let refused = 0
  for (const file of result.files) {
    const target = path.resolve(root, file.path)
    if (!target.startsWith(root + path.sep))
      throw new CliError('ADOPT', `refusing to write outside the repository: ${file.path}`)
    // redacted before serialising: a credential PVE echoes in a live value is never written to the repository
    const document = ctx.redactor.strings(file.document)
    const text = manifestYaml(document)
    if (text !== manifestYaml(file.document))
      lines.push(
        `adopt: warning: ${file.path} held a value that contains a secret; it is written as (sensitive): review it`,
      )
    if (existsSync(target)) {
      const current = readFileSync(target, 'utf8')
      if (current === text) {
        lines.push(`adopt: unchanged ${file.path} (${file.kind})`)
        continue
      }
      if (!args.force) {
        lines.push(
          `adopt: NOT overwriting ${file.path} (${file.kind}): it exists and differs; pass --force to replace it`,
        )
        refused++
        continue
      }
    }
    mkdirSync(path.dirname(target), { recursive: true })
    writeFileSync(target, text)
    lines.push(`adopt: wrote ${file.path} (${file.kind})`)
  }
  for (const gap of result.gaps)
    lines.push(`adopt: gap ${gap.kind} on ${gap.node}#${gap.id}: ${gap.field}=${gap.value} - ${gap.note}`)
  for (const warning of result.warnings) lines.push(`adopt: warning: ${warning}`)
  if (result.incomplete.length > 0) {
    lines.push('adopt: INCOMPLETE MESSAGES (do NOT list in resources.yaml until reviewed):')
    for (const i of result.incomplete) lines.push(`  - ${i.path}: ${i.reason}`)
  }
  if (result.skipped.length > 0) {
    lines.push('adopt: SKIPPED LIVE OBJECTS (deliberately not adopted - no manifest generated):')
    for (const s of result.skipped)
      lines.push(`  - ${s.kind} ${s.node}#${s.id}${s.name ? ` ("${s.name}")` : ''}: ${s.reason}`)
  }
  if (result.census.cipassword > 0)
    lines.push(
      `adopt: ${result.census.cipassword} VM(s) have a live cloud-init password; map them to ci-password-ref by hand`,
    )
  if (args['adopt-secrets'] && cluster.secretsFile) {
    if (result.newSshKeys.length > 0) {
      try {
        const merged = await mergeSopsFile(
          cluster.secretsFile,
          result.newSshKeys.map((k) => ({ path: ['cloud-init', 'ssh-keys', k.name], value: k.value })),
          { discovery: { env: ctx.env, homeDir: ctx.home } },
        )
        lines.push(
          `adopt: ${merged.written ? `merged ${merged.added.length} SSH key(s) into` : 'no new SSH keys for'} ${path.relative(root, cluster.secretsFile)}`,
        )
      } catch (error) {
        throw new CliError(
          'ADOPT',
          `adopt: SOPS merge failed (the file is unchanged): ${isSopsError(error) ? error.message : String((error as Error).message)}`,
        )
      }
    } else lines.push('adopt: no new SSH keys to merge')
  }
  if (result.resourcesLines.length > 0) {
    lines.push(`adopt: add these lines to clusters/${cluster.name}/resources.yaml:`, '  resources:')
    for (const line of result.resourcesLines) lines.push(`  ${line.startsWith('-') ? line : `- ${line}`}`)
  }
  if (result.gaps.length > 0 || result.incomplete.length > 0) {
    lines.push(
      'adopt: WARNING: generated YAML does not fully represent the live object(s); see gaps above. Review before git committing.',
    )
  }
  lines.push(
    `  nodes: [${result.summary.nodes.join(', ')}]`,
    `  guests: ${result.summary.guests}`,
    `  artifacts: ${result.summary.isos} ISOs, ${result.summary.ctTemplates} CTTemplates`,
  )
  out(ctx, `${lines.join('\n')}\n`)
  if (refused > 0) {
    throw new CliError(
      'ADOPT',
      `${refused} file(s) exist with other content and were not overwritten; review them or pass --force`,
    )
  }
  return 0
}
