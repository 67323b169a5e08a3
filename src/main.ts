import { runCli } from './cli/program.js';

const args = process.argv.slice(2);
const code = await runCli(args);
// `serve` keeps running on its listening socket; every other command ends here. The agent ends at once too:
// its last request may leave a connection open for a few seconds.
if (code !== 0 || args[0] === 'agent') process.exit(code);
