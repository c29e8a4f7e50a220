// Command-line options shared by the benchmarks, read with Node's own `util.parseArgs`.
import { parseArgs } from 'node:util';

/** `--name value` options of a benchmark, every one a string; an unknown option or a missing value throws. */
export function benchArgs(names, argv = process.argv.slice(2)) {
  return parseArgs({ args: argv, options: Object.fromEntries(names.map((name) => [name, { type: 'string' }])), strict: true }).values;
}
