/**
 * The client fits the planner's ports as it is: the ports are written in the client's own wire types, and
 * the CLI passes the client where a LiveReader or PveWriter is asked for. The read-only client has no write
 * method, so it must not fit PveWriter (diff, status and adopt cannot write).
 */
import type { PveClient, PveReadOnlyClient } from '@proxops/pve-client'
import type { Manifest } from '@proxops/schema'
import { describe, expectTypeOf, it } from 'vitest'
import type { DesiredState } from './desired.js'
import type { LiveReader, PveWriter } from './ports.js'

describe('ports', () => {
  it('the full client is a LiveReader and a PveWriter', () => {
    expectTypeOf<PveClient>().toExtend<LiveReader>()
    expectTypeOf<PveClient>().toExtend<PveWriter>()
  })

  it('the read-only client is a LiveReader and not a PveWriter', () => {
    expectTypeOf<PveReadOnlyClient>().toExtend<LiveReader>()
    expectTypeOf<PveReadOnlyClient>().not.toExtend<PveWriter>()
  })

  it('plan() reads the schema manifests themselves', () => {
    expectTypeOf<DesiredState['manifests'][number]>().toEqualTypeOf<Manifest>()
  })
})
