/**
 * /cluster/options over raw HTTPS: pve-manager PVE::API2::Cluster get_options / set_options and pve-cluster
 * PVE::DataCenterConfig parse_datacenter_config (property strings read back as objects, `description` and
 * `mac_prefix` always present), the parameters checked against the API schema.
 */
import { afterAll, beforeAll, describe as suite, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
import { apidocForTests } from '../apidoc/test-data.js'
import { form, raw, type RawResponse } from './test-support/raw.js'

const describe = suite.skipIf(!apidocForTests())

let sim: Simulator
let auth: Record<string, string>
const req = (method: string, path: string, params?: Record<string, string>): Promise<RawResponse> => {
  if (params === undefined) return raw(sim, method, `/api2/json${path}`, { headers: auth })
  const f = form(params)
  return raw(sim, method, `/api2/json${path}`, { headers: { ...auth, ...f.headers }, body: f.body })
}
const data = <T>(r: RawResponse): T => {
  expect(r.status, r.body).toBe(200)
  return (r.json as { data: T }).data
}

beforeAll(async () => {
  sim = await startSimulator({ taskDurationMs: 10, resourcesLagMs: 0, authFailureDelayMs: 0, log: () => {} })
  auth = { Authorization: sim.token.header }
})
afterAll(async () => {
  await sim?.close()
})

describe('PVE::API2::Cluster get_options / set_options', () => {
  it('a fresh datacenter.cfg: description empty, the default MAC prefix, allowed-tags', async () => {
    expect(data<Record<string, unknown>>(await req('GET', '/cluster/options'))).toEqual({
      description: '',
      mac_prefix: 'BC:24:11',
      'allowed-tags': [],
    })
  })

  it('set_options writes property strings; parse_datacenter_config reads them back as objects; delete removes', async () => {
    data(
      await req('PUT', '/cluster/options', {
        migration: 'type=insecure,network=10.0.0.0/24',
        ha: 'shutdown_policy=migrate',
        'next-id': 'lower=1000,upper=2000',
        keyboard: 'de',
        bwlimit: 'migration=100000',
      }),
    )
    expect(data<Record<string, unknown>>(await req('GET', '/cluster/options'))).toMatchObject({
      migration: { type: 'insecure', network: '10.0.0.0/24' },
      ha: { shutdown_policy: 'migrate' },
      'next-id': { lower: '1000', upper: '2000' },
      keyboard: 'de',
      bwlimit: 'migration=100000',
    })
    data(await req('PUT', '/cluster/options', { delete: 'keyboard,bwlimit' }))
    const after = data<Record<string, unknown>>(await req('GET', '/cluster/options'))
    expect(after).not.toHaveProperty('keyboard')
    expect(after).not.toHaveProperty('bwlimit')
    expect(after).toHaveProperty('ha')
  })

  it('additionalProperties 0 and the enums: an unknown option or an unknown keyboard is refused', async () => {
    expect((await req('PUT', '/cluster/options', { nonsense: '1' })).status).toBe(400)
    expect((await req('PUT', '/cluster/options', { keyboard: 'xx' })).status).toBe(400)
    // the property strings are checked against their formats (migration's `type` enum)
    expect((await req('PUT', '/cluster/options', { migration: 'type=bogus' })).status).toBe(400)
  })
})
