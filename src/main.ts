import { runCli } from './cli/program.js';

const code = await runCli(process.argv.slice(2));
// `serve` keeps running on its listening socket; every other command ends here.
if (code !== 0) process.exit(code);
