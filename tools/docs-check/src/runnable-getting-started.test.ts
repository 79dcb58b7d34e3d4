import { defineRunnablePage } from './runnable.js'

defineRunnablePage('docs/getting-started.md', 8)
