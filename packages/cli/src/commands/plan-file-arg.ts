/**
 * `proxops apply PLANFILE`, as Terraform takes it: the plan file `diff --out` saved, the same as `--plan PLANFILE`
 * (docs/cli.md, "apply"). An argument that is no file is answered with the exact forms, never guessed at.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { CliError } from '../errors.js'

export function planFileOf(cwd: string, args: { plan?: string; planfile?: string }): string | undefined {
  const { plan, planfile } = args
  if (planfile === undefined) return plan
  if (plan !== undefined)
    throw new CliError(
      'USAGE',
      `apply takes one saved plan: proxops apply --plan ${plan} or proxops apply ${planfile}, not both; nothing was applied`,
    )
  if (existsSync(path.resolve(cwd, planfile))) return planfile
  // `apply VM/web` is kubectl's habit for one object
  const target = /^[A-Za-z]+\/[A-Za-z0-9._-]+$/.test(planfile)
    ? `; for one object: proxops apply --target ${planfile}`
    : ''
  throw new CliError(
    'USAGE',
    `apply's argument is a plan file saved by diff --out, and there is no file ${JSON.stringify(planfile)}: save it with proxops diff --out ${planfile}, then apply it with proxops apply --plan ${planfile}${target}; nothing was applied`,
  )
}
