import { defineRunnablePage } from './runnable.js'

defineRunnablePage('README.md', 3)
