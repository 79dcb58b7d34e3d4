/** Architecture target: validating 1,000 manifests stays well under a second of loader time. */
import { afterAll, expect, it } from 'vitest'
import { loadRepository } from '../src/index.js'
import { clusterConfig, isoYaml, tempRepo, vmYaml } from '../src/test-support/repo.js'

const repo = tempRepo({ 'clusters/big/config.yaml': clusterConfig('big', ['pve1', 'pve2', 'pve3', 'pve4']) })
afterAll(() => repo.cleanup())

it('loads 1,000 manifests quickly', async () => {
  const entries: string[] = ['../../iso/base/boot.yaml']
  repo.write('iso/base/boot.yaml', isoYaml('boot', ['pve1', 'pve2', 'pve3', 'pve4']))
  for (let i = 0; i < 999; i++) {
    const node = `pve${(i % 4) + 1}`
    repo.write(
      `vm/big/vm-${i}.yaml`,
      vmYaml(`vm-${i}`, 1000 + i, node, '  hardware: {cdrom: {iso: boot}}\n  networks: [{bridge: vmbr0}]\n'),
    )
    entries.push(`../../vm/big/vm-${i}.yaml`)
  }
  repo.write('clusters/big/resources.yaml', `resources:\n${entries.map((e) => `  - ${e}\n`).join('')}`)
  await loadRepository({ root: repo.root }) // warm-up (module loading)
  const start = performance.now()
  const model = await loadRepository({ root: repo.root })
  const ms = performance.now() - start
  expect(model.errors).toEqual([])
  expect(model.clusters[0]!.index.resources).toHaveLength(1000)
  expect(model.clusters[0]!.graph.level.get('VM/vm-1')).toBe(1)
  console.log(`loaded 1,000 manifests in ${ms.toFixed(0)} ms`)
  expect(ms).toBeLessThan(10_000) // catches accidental quadratic work; the <= 1 s target is measured by tools/bench
})
