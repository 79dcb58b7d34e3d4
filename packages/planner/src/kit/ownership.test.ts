/**
 * Ownership markers (kit/ownership.ts, docs/safety.md section 1): which cluster entry owns a guest by its tags,
 * and a pool or backup job by the first word of its comment. ProxOps deletes only what this decides is its own,
 * so every branch is pinned here; part of the tests `pnpm mutate` runs (docs/mutation-testing.md).
 */
import { fc, test as prop } from '@fast-check/vitest'
import { describe, expect, test } from 'vitest'
import {
  commentMarker,
  commentOwner,
  commentText,
  commentWord,
  isOwnershipTag,
  markedEntries,
  ownedHere,
  ownerMarker,
  ownerOf,
} from './ownership.js'

const home = { ownershipTag: 'proxops', clusterEntry: 'home' }
const noEntry = { ownershipTag: 'proxops' }

describe('guest tags', () => {
  test('the marker of an entry, none without one', () => {
    expect(ownerMarker(home)).toBe('proxops.home')
    expect(ownerMarker(noEntry)).toBeUndefined()
  })

  test('isOwnershipTag: the tag itself or a marker, never a tag that merely begins with it', () => {
    expect(isOwnershipTag('proxops', 'proxops')).toBe(true)
    expect(isOwnershipTag('proxops.home', 'proxops')).toBe(true)
    expect(isOwnershipTag('proxopsx', 'proxops')).toBe(false)
    expect(isOwnershipTag('other', 'proxops')).toBe(false)
  })

  test('markedEntries: the entries after the prefix; the bare prefix and lookalikes name none', () => {
    expect(
      markedEntries(['proxops', 'proxops.', 'proxops.home', 'proxopsx.y', 'a.proxops.b', 'proxops.w'], 'proxops'),
    ).toEqual(['home', 'w'])
  })

  test.each([
    // [tags, with entry "home", without an entry]
    [[], 'none', 'none'],
    [['other'], 'none', 'none'],
    [['proxops'], 'unmarked', 'self'],
    [['proxops', 'proxops.home'], 'self', 'self'],
    [['proxops.home'], 'none', 'none'],
    [['proxops', 'proxops.'], 'unmarked', 'self'],
    [['proxops', 'proxops.work'], 'other', 'self'],
    [['proxops.work'], 'other', 'none'],
    [['proxops', 'proxops.home', 'proxops.work'], 'other', 'self'],
  ] as const)('ownerOf(%j): %s with an entry, %s without', (tags, withEntry, without) => {
    expect(ownerOf(tags, home).kind).toBe(withEntry)
    expect(ownerOf(tags, noEntry).kind).toBe(without)
  })

  test("another entry's markers are named, without this entry's own", () => {
    expect(ownerOf(['proxops', 'proxops.home', 'proxops.work', 'proxops.lab'], home)).toEqual({
      kind: 'other',
      entries: ['work', 'lab'],
    })
  })

  test('ownedHere: this entry updates its own and unmarked guests, never others', () => {
    expect(
      (['none', 'self', 'unmarked'] as const)
        .map((kind) => ownedHere({ kind }))
        .concat(ownedHere({ kind: 'other', entries: ['x'] })),
    ).toEqual([false, true, true, false])
  })

  prop.prop([
    fc.array(fc.constantFrom('proxops', 'proxops.home', 'proxops.work', 'web', 'proxops.'), { maxLength: 5 }),
  ])('a guest is self only with both the tag and this marker (or the tag alone without an entry)', (tags) => {
    const kind = ownerOf(tags, home).kind
    if (kind === 'self')
      expect(tags.includes('proxops') && tags.includes('proxops.home') && !tags.includes('proxops.work')).toBe(true)
    if (ownerOf(tags, noEntry).kind === 'self') expect(tags).toContain('proxops')
  })
})

describe('comment markers', () => {
  test('the marker written: with the entry, or the bare tag without one', () => {
    expect(commentMarker(home)).toBe('managed-by=proxops.home')
    expect(commentMarker(noEntry)).toBe('managed-by=proxops')
  })

  test('commentWord: the first word, trimmed; empty for no comment', () => {
    expect(commentWord('  managed-by=proxops.home  nightly  ')).toBe('managed-by=proxops.home')
    expect(commentWord(undefined)).toBe('')
    expect(commentWord('')).toBe('')
    expect(commentWord('a\tb')).toBe('a')
  })

  test.each([
    // [comment, with entry "home", without an entry]
    [undefined, 'none', 'none'],
    ['nightly backups', 'none', 'none'],
    ['see managed-by=proxops.home', 'none', 'none'],
    ['managed-by=other', 'none', 'none'],
    ['managed-by=proxopsx', 'none', 'none'],
    // a marker mistyped is no marker, whatever follows it
    ['managed_by=proxops.home', 'none', 'none'],
    ['unmanaged-by=proxops', 'none', 'none'],
    ['managed-by=proxops', 'unmarked', 'self'],
    ['managed-by=proxops.home nightly', 'self', 'self'],
    ['  managed-by=proxops.home', 'self', 'self'],
    ['managed-by=proxops.work', 'other', 'self'],
    ['managed-by=proxops.homer', 'other', 'self'],
  ] as const)('commentOwner(%j): %s with an entry, %s without', (comment, withEntry, without) => {
    expect(commentOwner(comment, home)).toBe(withEntry)
    expect(commentOwner(comment, noEntry)).toBe(without)
  })

  test("commentText: the user's part after any ProxOps marker; undefined when nothing is left", () => {
    expect(commentText(undefined, 'proxops')).toBeUndefined()
    expect(commentText('', 'proxops')).toBeUndefined()
    expect(commentText('  managed-by=proxops.work  ', 'proxops')).toBeUndefined()
    expect(commentText('managed-by=proxops.work   nightly  jobs ', 'proxops')).toBe('nightly  jobs')
    expect(commentText(' managed-by=other nightly ', 'proxops')).toBe('managed-by=other nightly')
    expect(commentText('nightly', 'proxops')).toBe('nightly')
  })
})
