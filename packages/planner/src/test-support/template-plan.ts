/** The plan that the --target and hold tests narrow: a CTTemplate two containers need, and a VM that needs nothing. */
import { artifact, desired, inventory, lookup, lxc, policy, vm } from '../fixtures.test.helpers.js'
import { plan } from '../plan/plan.js'
import type { Plan } from '../plan-types.js'

export const templatePlan: Plan = plan(
  desired(artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst'), lxc('ct', 200), lxc('ct2', 201), vm('web', 100)),
  inventory(),
  policy(),
  { secrets: lookup },
)

/** each action as `kind:name:verb`, in plan order */
export const actionShape = (p: Plan): string[] => p.actions.map((a) => `${a.kind}:${a.name ?? a.address}:${a.type}`)
