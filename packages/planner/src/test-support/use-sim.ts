/** The simulator set-up the kinds' simulator tests share: one in-process PVE opened before and closed after. */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { simPve, type SimPve } from './sim.js'

/**
 * Opens a simulator before the file's tests (`per: 'test'`: before each test), hands it to `use`, and closes it
 * after them.
 */
export function useSimPve(
  options: Parameters<typeof simPve>[0],
  per: 'file' | 'test',
  use: (env: SimPve) => void,
): void {
  let env: SimPve | undefined
  ;(per === 'file' ? beforeAll : beforeEach)(() => {
    env = simPve(options)
    use(env)
  })
  ;(per === 'file' ? afterAll : afterEach)(async () => {
    await env?.close()
  })
}
