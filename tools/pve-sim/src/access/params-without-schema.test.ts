/**
 * Without the API schema (a fresh clone has no ../shared), parameters arrive as the strings a client sends. The
 * access routes still read PVE's booleans as 0/1 (PVE::JSONSchema's `boolean` accepts 0 and 1): `full=1` lists
 * each user's tokens (PVE::API2::User index), `privsep=0` and `enable=0` are stored as false.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
import { apiRequest, okData, type RawResponse } from '../http/test-support/raw.js'

let sim: Simulator
let root: Record<string, string>
const call = (method: string, path: string, params?: Record<string, string>): Promise<RawResponse> =>
  apiRequest(sim, root, method, path, params)

beforeAll(async () => {
  sim = await startSimulator({ schemaValidation: false, authFailureDelayMs: 0, taskDurationMs: 10, log: () => {} })
  root = { Authorization: sim.token.header }
})
afterAll(async () => {
  await sim.close()
})

describe('access parameters without the API schema', () => {
  it('full=1 lists tokens, privsep=0 and enable=0 are false', async () => {
    expect(sim.schemaValidation).toBe(false)
    await okData(call('POST', '/access/users', { userid: 'bob@pve', enable: '0' }))
    await okData(call('POST', '/access/users/bob@pve/token/ci', { privsep: '0' }))
    const users = await okData<{ userid: string; enable: number; tokens?: { tokenid: string; privsep: number }[] }[]>(
      call('GET', '/access/users', { full: '1' }),
    )
    expect(users.find((u) => u.userid === 'bob@pve')).toMatchObject({
      enable: 0,
      tokens: [{ tokenid: 'ci', privsep: 0 }],
    })
  })
})
