/**
 * What the daemon remembers across restarts, in its data dir (`<data-dir>/daemon-memory.json`): each cluster's
 * recent cycles (the status page's history) and the times of its recent deletions (the sliding prune window), so that
 * a restart neither forgets what happened nor hands out a fresh prune window. A missing or damaged file is an empty
 * memory: what it held is only history.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { CycleSummary } from './history.js'

export const MEMORY_FILE = 'daemon-memory.json'

export interface Memory {
  history: Record<string, CycleSummary[]>
  /** ms timestamps of deletions, per cluster */
  deletions: Record<string, number[]>
}

export function readMemory(dataDir: string): Memory {
  try {
    const doc = JSON.parse(readFileSync(path.join(dataDir, MEMORY_FILE), 'utf8')) as Partial<Memory>
    const history: Memory['history'] = {}
    for (const [cluster, list] of Object.entries(doc.history ?? {}))
      if (Array.isArray(list)) history[cluster] = list.filter((x) => typeof x?.result === 'string')
    const deletions: Memory['deletions'] = {}
    for (const [cluster, list] of Object.entries(doc.deletions ?? {}))
      if (Array.isArray(list)) deletions[cluster] = list.filter((t): t is number => Number.isFinite(t))
    return { history, deletions }
  } catch {
    return { history: {}, deletions: {} }
  }
}

export function writeMemory(dataDir: string, memory: Memory): void {
  mkdirSync(dataDir, { recursive: true })
  const file = path.join(dataDir, MEMORY_FILE)
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, `${JSON.stringify({ format_version: 1, ...memory })}\n`, { mode: 0o600 })
  renameSync(tmp, file)
}
