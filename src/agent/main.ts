// The standalone agent, built into dist/edgewatch-agent.mjs: one file that needs only Node, for devices.
import { runAgentCli } from './cli.js';

// At once: the last request may leave a connection open for a few seconds.
process.exit(await runAgentCli(process.argv.slice(2), process.env));
