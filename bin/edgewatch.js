#!/usr/bin/env -S node --max-semi-space-size=4
// The same Node options as `npm start`: a young generation capped at 2 × 4 MB keeps the idle process small
// (docs/benchmarks.md, "Memory").
import '../dist/main.js';
