/** defineKind holds a kind's privileges to the calls its runners send, at compile time (`pnpm typecheck`). */
import { expectTypeOf } from 'vitest'
import { pool } from '../kinds/pool/index.js'
import { defineKind, type Kind } from './kind.js'

const { run, privileges, ...rest } = pool
const createPool = run.createPool!
const needs = privileges.createPool!

expectTypeOf(defineKind({ ...rest, run: { createPool }, privileges: { createPool: needs } })).toEqualTypeOf<Kind>()

// a runner whose call has no privileges
// @ts-expect-error privileges lacks createPool
defineKind({ ...rest, run: { createPool }, privileges: {} })

// privileges for a call the kind does not run
// @ts-expect-error run lacks deletePool
defineKind({ ...rest, run: { createPool }, privileges: { createPool: needs, deletePool: () => [] } })
