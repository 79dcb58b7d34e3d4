/**
 * adopt --cluster X: PVE -> YAML through the read-only client. Writes `<kind>/<cluster>/<name>.yaml`
 * under the repository root, never overwriting a different file without --force; prints gaps, INCOMPLETE and
 * SKIPPED lists and the lines for resources.yaml. --adopt-secrets merges unmatched SSH keys into the
 * cluster's SOPS file through @proxops/sops (atomic, existing names never overwritten).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { stringify } from 'yaml'
import { DEFAULT_POLICY, adopt, declaredObjects, observe, selectForAdoption } from '@proxops/planner'
import { isSopsError, mergeSopsFile } from '@proxops/sops'
import { CliError } from '../errors.js'
import { clientHooks, readOnlyClient } from '../runtime/clients.js'
import { out, type CliContext } from '../runtime/context.js'
import { loadDraftConfig } from '../config/load.js'
import { loadDesired } from '../runtime/desired.js'
import { globalFlags, prepare, type GlobalArgs } from './common.js'

export interface AdoptArgs extends GlobalArgs {
  cluster?: string
  force?: boolean
  'adopt-secrets'?: boolean
  vmid?: number[]
  name?: string[]
  tag?: string[]
  'include-declared'?: boolean
}

/**
 * The composition lines to paste as they are. When `resources.yaml` ends with its block list, the entries to
 * append at its end, with the indent that list uses; when it lists nothing yet (`resources: []`, or no file),
 * the whole file; otherwise the entries to add under `resources:`.
 */
export function compositionLines(
  current: string | undefined,
  entries: readonly string[],
): { how: string; lines: string[] } {
  const all = (current ?? '').split('\n')
  const head = all.findIndex((l) => /^resources:[ \t]*(#.*)?$/.test(l))
  const rest = head < 0 ? [] : all.slice(head + 1).filter((l) => !/^[ \t]*(#.*)?$/.test(l))
  const indent = /^([ \t]+)- /.exec(rest[0] ?? '')?.[1]
  if (indent !== undefined && rest.every((l) => l.startsWith(`${indent}- `)))
    return { how: 'append these lines to', lines: entries.map((e) => `${indent}${e}`) }
  if (head < 0 && /^resources:[ \t]*\[\s*\][ \t]*(#.*)?$/m.test(current ?? 'resources: []'))
    return { how: 'write this as', lines: ['resources:', ...entries.map((e) => `  ${e}`)] }
  return { how: 'add these entries under resources: in', lines: entries.map((e) => `  ${e}`) }
}

/** Free text: a secret PVE echoes there is written masked (with a warning); in any other field it is refused. */
const FREE_TEXT = new Set(['pve-description', 'description', 'comment', 'notes-template'])

/** The dotted paths of the string values that masking changed, in document order. */
export function maskedPaths(before: unknown, after: unknown, at = ''): string[] {
  if (typeof before === 'string') return before !== after ? [at] : []
  if (typeof before !== 'object' || before === null) return []
  const other = after as Record<string, unknown>
  return Object.entries(before).flatMap(([key, value]) =>
    maskedPaths(value, other[key], Array.isArray(before) ? `${at}[${key}]` : at ? `${at}.${key}` : key),
  )
}

/** The masked paths outside free text: the manifest would no longer describe the object, so it is not written. */
export function structuralMasks(paths: readonly string[]): string[] {
  return paths.filter(
    (p) =>
      !FREE_TEXT.has(
        p
          .replace(/\[\d+\]$/, '')
          .split('.')
          .pop() ?? '',
      ),
  )
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
  // what the repository already declares is not adopted again (a second manifest would claim it twice)
  const tree = await prepared.source.sync()
  const declared = declaredObjects((await loadDesired(tree.root, cluster.name, tree.commit)).desired.manifests)
  const reader = readOnlyClient(cluster, prepared.config, clientHooks(ctx))
  let result
  let selection
  try {
    const observed = await observe(cluster.name, reader, {
      nodes: cluster.nodes,
      signal: ctx.signal,
      firewalls: 'all',
      // the access objects only where the cluster manages access (docs/access.md#adopt)
      ...(cluster.access ? { access: true } : {}),
      sdn: true,
      storages: 'all',
      clusterOptions: true,
    })
    selection = selectForAdoption(observed, {
      declaredVmids: declared.vmids,
      declaredVolids: declared.volids,
      declaredJobs: declared.jobs,
      declaredPoolids: declared.poolids,
      declaredStorages: declared.storages,
      only: { vmids: args.vmid ?? [], names: args.name ?? [], tags: args.tag ?? [] },
      ...(args['include-declared'] ? { includeDeclared: true } : {}),
      // what another cluster entry's marker names is that entry's: never adopted here
      owner: { ownershipTag: DEFAULT_POLICY.ownershipTag, clusterEntry: cluster.name },
    })
    const inventory = selection.live
    const sshKeys = sops
      ? Object.fromEntries(sops.names('ssh-keys').map((n) => [n, sops.cloudInit('ssh-keys', n)?.reveal() ?? '']))
      : undefined
    result = adopt(inventory, {
      cluster: cluster.name,
      ...(sshKeys ? { sshKeys } : {}),
      importSshKeys: Boolean(args['adopt-secrets']),
      poolManifests: selection.poolManifests,
    })
  } finally {
    await reader.close()
  }
  const lines: string[] = [`adopt: cluster ${cluster.name} (read-only)`]
  const {
    guests: declaredGuests,
    volids: declaredVolids,
    jobs: declaredJobs,
    poolids: declaredPools,
  } = selection.declared
  if (declaredGuests.length + declaredVolids.length + declaredJobs.length + declaredPools.length > 0)
    lines.push(
      `adopt: already declared in the repository, not adopted again: ${[...declaredGuests.map((v) => `vmid ${v}`), ...declaredVolids, ...declaredJobs.map((id) => `backup job ${id}`), ...declaredPools.map((p) => `pool ${p}`)].join(', ')}`,
    )
  if (selection.ownedElsewhere.length > 0)
    lines.push(
      `adopt: owned by another cluster entry, not adopted: ${selection.ownedElsewhere.map((o) => `${o.kind === 'guest' ? 'vmid' : o.kind === 'pool' ? 'pool' : 'backup job'} ${o.id} (${o.marker})`).join(', ')}`,
    )
  if (selection.filteredOut > 0) lines.push(`adopt: ${selection.filteredOut} other guest(s) left out by the filter`)
  if (result.files.length === 0 && result.skipped.length === 0) {
    out(ctx, `${lines.join('\n')}\nadopt: no objects to adopt\n`)
    return 0
  }
  const root = prepared.config.root
  let refused = 0
  let unsafe = 0
  for (const file of result.files) {
    const target = path.resolve(root, file.path)
    if (!target.startsWith(root + path.sep))
      throw new CliError('ADOPT', `refusing to write outside the repository: ${file.path}`)
    // redacted before serialising: a credential PVE echoes in a live value is never written to the repository
    const document = ctx.redactor.strings(file.document)
    const masked = maskedPaths(file.document, document)
    // ... and never into a name, a node, a tag or any other field that says what the object is: the file is refused
    const structural = structuralMasks(masked)
    if (structural.length > 0) {
      lines.push(
        `adopt: NOT writing ${file.path} (${file.kind}): ${structural.join(', ')} would hold a masked secret, and the manifest would not describe the object; a secret value of cluster ${cluster.name} occurs in it (review its secrets file)`,
      )
      unsafe++
      continue
    }
    const text = manifestYaml(document)
    if (masked.length > 0)
      lines.push(
        `adopt: warning: ${file.path}: ${masked.join(', ')} held a secret; it is written as (sensitive): review it`,
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
    // cluster-wide objects (backup jobs) have no node
    lines.push(
      `adopt: gap ${gap.kind} ${gap.node === '' ? gap.id : `on ${gap.node}#${gap.id}`}: ${gap.field}=${gap.value} - ${gap.note}`,
    )
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
    const composition = path.join(root, 'clusters', cluster.name, 'resources.yaml')
    const current = existsSync(composition) ? readFileSync(composition, 'utf8') : undefined
    const entries = result.resourcesLines.map((line) => (line.startsWith('-') ? line : `- ${line}`))
    const paste = compositionLines(current, entries)
    lines.push(`adopt: ${paste.how} clusters/${cluster.name}/resources.yaml:`, ...paste.lines, 'adopt: end of lines')
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
    `  backup jobs: ${result.summary.backupJobs}`,
  )
  out(ctx, `${lines.join('\n')}\n`)
  if (unsafe > 0)
    throw new CliError('ADOPT', `${unsafe} file(s) were not written: they would hold a masked secret (see above)`)
  if (refused > 0) {
    throw new CliError(
      'ADOPT',
      `${refused} file(s) exist with other content and were not overwritten; review them or pass --force`,
    )
  }
  return 0
}
