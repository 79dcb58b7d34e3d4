#!/usr/bin/env node
/**
 * Times plan() alone in a fresh process: `node plan-child.js <input.json> <repeats>`.
 * The input holds { desired, live, policy } as the plan-10k scenario saved them. The process holds nothing
 * else (no simulator, no HTTP client), so the CPU time is plan()'s own, GC of its own garbage included.
 * Prints one JSON line: the first call (what a `proxops diff` pays), the repeated calls, the action count,
 * a SHA-256 of the serialized plan and whether every call produced the same bytes.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { plan, serializePlan, type DesiredState, type LiveInventory, type Policy } from '@proxops/planner'

export interface PlanChildInput {
  desired: DesiredState
  live: LiveInventory
  policy: Policy
}

export interface PlanChildResult {
  /** process CPU of the first call: every thread, the runtime's compiler and GC helpers included */
  firstMs: number
  /** the calling thread's share of firstMs (Linux; undefined elsewhere) */
  firstMainMs?: number
  repeatMs: number[]
  actions: number
  sha256: string
  deterministic: boolean
}

const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000

/** CPU time of this (the main) thread in ms, from Linux's per-thread scheduler statistics */
function mainThreadMs(): number | undefined {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
  } catch {
    return undefined
  }
}

function main(): void {
  const [file, repeatsArg] = process.argv.slice(2)
  if (file === undefined) throw new Error('usage: plan-child <input.json> [repeats]')
  const repeats = Number(repeatsArg ?? '5')
  const input = JSON.parse(readFileSync(file, 'utf8')) as PlanChildInput
  const times: number[] = []
  let first = ''
  let deterministic = true
  let actions = 0
  let firstMainMs: number | undefined
  for (let i = 0; i <= repeats; i++) {
    const main = i === 0 ? mainThreadMs() : undefined
    const t = process.cpuUsage()
    const p = plan(input.desired, input.live, input.policy)
    times.push(cpuMs(process.cpuUsage(t)))
    const mainAfter = i === 0 ? mainThreadMs() : undefined
    if (main !== undefined && mainAfter !== undefined) firstMainMs = mainAfter - main
    const bytes = serializePlan(p) // outside the timed region
    if (i === 0) {
      first = bytes
      actions = p.actions.length
    } else if (bytes !== first) deterministic = false
  }
  const result: PlanChildResult = {
    firstMs: times[0] as number,
    ...(firstMainMs === undefined ? {} : { firstMainMs }),
    repeatMs: times.slice(1),
    actions,
    sha256: createHash('sha256').update(first).digest('hex'),
    deterministic,
  }
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

main()
