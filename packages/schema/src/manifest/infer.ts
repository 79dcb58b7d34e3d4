/**
 * Type helpers that derive the normalised manifest model (types.ts) from the valibot schemas' output: a field
 * finalise() completes is named once, everything else keeps the type its schema gives it.
 */
import type * as v from 'valibot'

export type Out<S extends v.GenericSchema> = v.InferOutput<S>
/** `T` with the fields of `Done` as finalise() leaves them (defaulted, rewritten); all others as the schema outputs */
export type Completed<T, Done> = { [K in keyof Omit<T, keyof Done>]: T[K] } & Done
/** `T` with the optional `Keys` made present: finalise() gives them a default */
export type Defaulted<T, Keys extends keyof T> = Completed<T, { [K in Keys]-?: Exclude<T[K], undefined> }>
