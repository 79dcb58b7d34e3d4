import { describe } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import * as wire from './index.js'
import { returnsOrWireError } from '../test-support/codec.js'

/** Whatever a JS caller passes (the types aside), a codec returns or throws a coded WireError, nothing else. */
const codecs: [string, (v: never) => unknown][] = [
  ['parsePropertyString', (v) => wire.parsePropertyString(v)],
  ['parsePropertyString with default key', (v) => wire.parsePropertyString(v, { defaultKey: 'file' })],
  ['formatPropertyString', (v) => wire.formatPropertyString(v)],
  ['parseSize', (v) => wire.parseSize(v)],
  ['formatSize', (v) => wire.formatSize(v)],
  ['parseResize', (v) => wire.parseResize(v)],
  ['formatResize', (v) => wire.formatResize(v)],
  ['parseTags', (v) => wire.parseTags(v)],
  ['normaliseTags', (v) => wire.normaliseTags(v)],
  ['normaliseTagString', (v) => wire.normaliseTagString(v)],
  ['encodeSshKeys', (v) => wire.encodeSshKeys(v)],
  ['decodeSshKeys', (v) => wire.decodeSshKeys(v)],
  ['parseUpid', (v) => wire.parseUpid(v)],
  ['formatUpid', (v) => wire.formatUpid(v)],
  ['decodeGuestConfig', (v) => wire.decodeGuestConfig(v)],
  ['encodeParams', (v) => wire.encodeParams(v)],
  ['toInt', (v) => wire.toInt(v)],
  ['toBool', (v) => wire.toBool(v)],
]

describe('every wire codec on arbitrary input', () => {
  test.prop([fc.anything({ withNullPrototype: true, withBigInt: true, withMap: true, withSet: true })], {
    numRuns: 200,
  })('returns or throws a WireError', (v) => {
    for (const [, codec] of codecs) returnsOrWireError(() => codec(v as never))
  })
})
