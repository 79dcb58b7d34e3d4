import { fc, test } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import {
  anchorLinks,
  fencedBlocks,
  headingAnchors,
  parseExpectations,
  relativeLinks,
  runnableBlocks,
  slug,
  splitCommands,
  trailingComment,
} from './markdown.js'

describe('fencedBlocks', () => {
  it('reads info strings, bodies and lines; longer and tilde fences', () => {
    const text = [
      '# t',
      '```sh runnable',
      'proxops diff',
      '```',
      '',
      '~~~~yaml',
      'a: 1',
      '```',
      '~~~~',
      '````',
      '```',
      '````',
    ].join('\n')
    const blocks = fencedBlocks(text)
    expect(blocks.map((b) => [b.info, b.body, b.line])).toEqual([
      ['sh runnable', 'proxops diff', 2],
      ['yaml', 'a: 1\n```', 6],
      ['', '```', 10],
    ])
    expect(runnableBlocks(text).map((b) => b.line)).toEqual([2])
  })

  it('ignores inline code that looks like a fence, and reads an unclosed fence to the end', () => {
    expect(fencedBlocks('```js `x` ```\ntext')).toEqual([])
    expect(fencedBlocks('```sh\na\nb').map((b) => b.body)).toEqual(['a\nb'])
  })

  it('needs a shell language and the runnable word', () => {
    const text = '```yaml runnable\na: 1\n```\n```sh\nx\n```\n```bash runnable\ny\n```\n'
    expect(runnableBlocks(text).map((b) => b.body)).toEqual(['y'])
  })

  test.prop(
    [
      fc.array(fc.array(fc.stringMatching(/^[a-z #:"]{0,12}$/), { maxLength: 4 }), { maxLength: 5 }),
      fc.array(fc.constantFrom('sh', 'sh runnable', 'yaml', ''), { minLength: 5, maxLength: 5 }),
    ],
    { numRuns: 200 },
  )('round trip: blocks written with fences are read back with their info and body', (bodies, infos) => {
    const text = bodies.map((lines, i) => `para ${i}\n\n\`\`\`${infos[i]}\n${lines.join('\n')}\n\`\`\`\n`).join('\n')
    const blocks = fencedBlocks(text)
    expect(blocks.map((b) => b.body)).toEqual(bodies.map((lines) => lines.join('\n')))
    expect(blocks.map((b) => b.info)).toEqual(bodies.map((_, i) => infos[i]))
  })
})

describe('relativeLinks', () => {
  it('finds inline links, images and reference definitions; skips URLs, anchors and code', () => {
    const text = [
      'See [cli](docs/cli.md#flags) and ![img](./a.png "title") and [web](https://example.invalid/x.md).',
      '[top](#start) [mail](mailto:a@b.invalid) `[not](code.md)`',
      '```md',
      '[also not](inside.md)',
      '```',
      '[ref]: ../packages/cli/README.md',
      '[spaced](<docs/a b.md>) [enc](docs/a%20b.md)',
    ].join('\n')
    expect(relativeLinks(text)).toEqual([
      { target: 'docs/cli.md', line: 1 },
      { target: './a.png', line: 1 },
      { target: '../packages/cli/README.md', line: 6 },
      { target: 'docs/a b.md', line: 7 },
      { target: 'docs/a b.md', line: 7 },
    ])
  })

  test.prop([fc.array(fc.stringMatching(/^[a-z][a-z0-9/-]{0,15}\.md$/), { maxLength: 6 })], { numRuns: 200 })(
    'every written link is found once, in order',
    (targets) => {
      const text = targets.map((t, i) => `Line ${i} [x](${t}) and [u](https://e.invalid/${t}).`).join('\n')
      expect(relativeLinks(text).map((l) => l.target)).toEqual(targets)
    },
  )
})

describe('trailingComment and parseExpectations', () => {
  it('finds comments outside quotes only, at word starts', () => {
    expect(trailingComment('proxops diff   # exit 2')).toBe(' exit 2')
    expect(trailingComment('echo "a # b" # c')).toBe(' c')
    expect(trailingComment("echo 'a # b'")).toBeUndefined()
    expect(trailingComment('echo a#b')).toBeUndefined()
    expect(trailingComment('echo \\# x')).toBeUndefined()
  })

  it('reads the exit status and the quoted strings', () => {
    expect(parseExpectations(undefined)).toEqual({ exit: 0, contains: [] })
    expect(parseExpectations(' what would change')).toEqual({ exit: 0, contains: [] })
    expect(parseExpectations(' exits 2: "Plan:" and "to create"')).toEqual({
      exit: 2,
      contains: ['Plan:', 'to create'],
    })
    expect(parseExpectations(' exit 0 "No changes."')).toEqual({ exit: 0, contains: ['No changes.'] })
  })

  test.prop(
    [
      fc.stringMatching(/^[a-z -]{0,20}$/),
      fc.integer({ min: 0, max: 255 }),
      fc.array(fc.stringMatching(/^[A-Za-z.: ]{1,10}$/), { maxLength: 3 }),
    ],
    { numRuns: 200 },
  )('a comment written from expectations parses back to them', (cmd, exit, contains) => {
    const line = `proxops ${cmd} # exit ${exit}: ${contains.map((c) => `"${c}"`).join(' ')}`
    expect(parseExpectations(trailingComment(line))).toEqual({ exit, contains })
  })
})

describe('splitCommands', () => {
  it('drops comments and blanks, keeps continuations and here-documents whole', () => {
    const body = [
      '# a comment',
      'proxops validate        # "valid"',
      '',
      'proxops diff \\',
      '  --detailed-exitcode   # exit 2',
      "cat > f.yaml <<'YAML'",
      'secrets:',
      '  # not a command',
      '  a: b',
      'YAML',
      'proxops status',
    ].join('\n')
    expect(splitCommands(body)).toEqual([
      { text: 'proxops validate        # "valid"', line: 2, exit: 0, contains: ['valid'] },
      { text: 'proxops diff \\\n  --detailed-exitcode   # exit 2', line: 4, exit: 2, contains: [] },
      { text: "cat > f.yaml <<'YAML'\nsecrets:\n  # not a command\n  a: b\nYAML", line: 6, exit: 0, contains: [] },
      { text: 'proxops status', line: 11, exit: 0, contains: [] },
    ])
  })

  test.prop([fc.array(fc.stringMatching(/^[a-z][a-z -]{0,15}$/), { maxLength: 8 })], { numRuns: 200 })(
    'one command per plain line, in order',
    (lines) => {
      const body = lines.flatMap((l) => [`# about ${l}`, `proxops ${l}`, '']).join('\n')
      expect(splitCommands(body).map((c) => c.text)).toEqual(lines.map((l) => `proxops ${l}`))
    },
  )
})

describe('anchors', () => {
  it('slugs headings like GitHub', () => {
    expect(slug('3. An age key and the credentials file (no `sops` binary)')).toBe(
      '3-an-age-key-and-the-credentials-file-no-sops-binary',
    )
    expect(slug('Using `@proxops/pve-client` on its own')).toBe('using-proxopspve-client-on-its-own')
    expect(slug('See [the CLI](cli.md) now')).toBe('see-the-cli-now')
    expect(slug('spec_extra & more')).toBe('spec_extra--more')
  })

  it('numbers repeated headings and ignores headings in code', () => {
    const text = '# A\n## A\n```md\n# B\n```\n### A #\n'
    expect([...headingAnchors(text)]).toEqual(['a', 'a-1', 'a-2'])
  })

  it('finds same-page and cross-page fragments, not URLs', () => {
    const text = 'See [x](#vm), [y](schema-reference.md#lxc) and [z](https://e.invalid/#q).\n`[no](#code)`'
    expect(anchorLinks(text)).toEqual([
      { target: '', fragment: 'vm', line: 1 },
      { target: 'schema-reference.md', fragment: 'lxc', line: 1 },
    ])
  })

  test.prop([fc.array(fc.stringMatching(/^[A-Za-z][A-Za-z ]{0,15}$/), { minLength: 1, maxLength: 8 })], {
    numRuns: 200,
  })('every heading gets one distinct anchor, and a link to it resolves', (headings) => {
    const text = headings.map((h) => `## ${h}`).join('\n\n')
    const anchors = headingAnchors(text)
    expect(anchors.size).toBe(headings.length)
    for (const h of headings) expect(anchors.has(slug(h))).toBe(true)
  })
})
