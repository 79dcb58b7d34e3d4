/**
 * scrub (scrub.ts): known secret values never leave the client in an error message or a log line, in the form PVE
 * echoes them back (as sent, or percent-encoded in a form body). Part of the tests `pnpm mutate` runs
 * (docs/mutation-testing.md).
 */
import { describe, expect, it } from 'vitest'
import { scrub } from './scrub.js'

describe('scrub', () => {
  it('replaces every occurrence of each secret, and its percent-encoded form, with the marker', () => {
    expect(scrub('token abcd1234 and again abcd1234', ['abcd1234'])).toBe('token (sensitive) and again (sensitive)')
    expect(scrub('password=p%40ss%2Fword!, then p@ss/word', ['p@ss/word'])).toBe(
      'password=(sensitive)!, then (sensitive)',
    )
    expect(scrub('one s3cr3t two t0k3n', ['s3cr3t', 't0k3n'])).toBe('one (sensitive) two (sensitive)')
  })

  it('leaves values shorter than four characters: they would mask ordinary words', () => {
    expect(scrub('a cat on the mat', ['cat', 'at', ''])).toBe('a cat on the mat')
    expect(scrub('the word pass passes', ['pass'])).toBe('the word (sensitive) (sensitive)es')
  })

  it('a secret the marker itself contains is masked once: the marker is not masked again', () => {
    expect(scrub('x sens y', ['sens'])).toBe('x (sensitive) y')
  })

  it('leaves text without secrets as it is', () => {
    expect(scrub('nothing here', [])).toBe('nothing here')
    expect(scrub('nothing here', ['elsewhere'])).toBe('nothing here')
  })
})
