import shared from '../../vitest.shared.mjs'

export default shared
