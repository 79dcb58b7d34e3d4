/**
 * Read-back after an action: the executor does not call an action done because a task said OK, the kind that
 * owns the action reads its object again (kinds/<kind>/confirm.ts). Returns a problem text, or undefined.
 */
import type { Action } from '../plan-types.js'
import { kindOf } from '../kinds/index.js'
import type { ActionContext } from '../kit/runners.js'

export async function confirmAction(
  action: Action,
  ctx: Pick<ActionContext, 'reader' | 'confirmAttempts' | 'confirmDelayMs' | 'sleep'>,
): Promise<string | undefined> {
  const attempts = Math.max(1, ctx.confirmAttempts)
  const kind = kindOf(action)
  let problem: string | undefined
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await ctx.sleep(ctx.confirmDelayMs)
    try {
      problem = await kind.confirm(action, ctx.reader)
    } catch (error) {
      problem = `read failed: ${error instanceof Error ? error.message : String(error)}`
    }
    if (problem === undefined) return undefined
  }
  return problem
}
