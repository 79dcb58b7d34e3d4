/**
 * docs/GAPS.md is assembled from the per-area files in docs/gaps/ (each package keeps its own list beside
 * its work): one section per file, headings demoted one level, in a fixed order. `gaps.test.ts` keeps the
 * committed file in sync; `pnpm --filter @proxops/docs-check gen-gaps` rewrites it.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

const ORDER = ['schema', 'sops', 'pve-client', 'planner', 'planner-run', 'cli', 'simulator', 'simulator-model', 'docs']

const INTRO = `# Known gaps

What ProxOps does not model or check, and what follows for you. Each section comes from one area's file in
[gaps/](gaps/) (edit those, then run \`pnpm --filter @proxops/docs-check gen-gaps\`). Measured performance and its
limits are in [performance.md](performance.md).

**The reference**, where a section compares with it, is the reference design ProxOps was written from: an earlier
GitOps reconciler for Proxmox VE whose repository layout, manifest kinds and fields, commands, flags and environment
variables ProxOps keeps, so that a repository written for it works here. Where ProxOps behaves differently it does
so on purpose; [architecture](architecture.md#deliberate-differences-from-the-reference-design) lists the main
differences, and the sections below the details.
`

export function mergeGaps(docsDir: string): string {
  const names = readdirSync(join(docsDir, 'gaps'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => f.slice(0, -3))
  const rank = (n: string): number => (ORDER.includes(n) ? ORDER.indexOf(n) : ORDER.length)
  names.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
  const sections = names.map((name) => {
    const text = readFileSync(join(docsDir, 'gaps', `${name}.md`), 'utf8').trim()
    return text
      .split('\n')
      .map((line) => (line.startsWith('#') ? `#${line}` : rebaseLinks(line)))
      .join('\n')
  })
  return `${INTRO}\n${sections.join('\n\n')}\n`
}

/** A relative link written in docs/gaps/x.md, as seen from docs/GAPS.md (one folder up). */
export function rebaseLinks(line: string): string {
  return line.replace(/\]\(([^)\s]+)\)/g, (whole, target: string) => {
    if (/^[a-z]+:/i.test(target) || target.startsWith('#') || target.startsWith('/')) return whole
    return `](${target.startsWith('../') ? target.slice(3) : `gaps/${target}`})`
  })
}
