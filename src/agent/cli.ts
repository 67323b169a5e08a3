import { parseArgs } from 'node:util';
import { Agent, EXIT_CONFIG } from './agent.js';
import { AgentConfigError, loadAgentConfig, readToken, type AgentConfig } from './config.js';
import { stderrLog, type AgentLog } from './log.js';
import { PendingReport } from './pending.js';
import { Prober } from './prober.js';
import { sendOnce } from './once.js';
import { sendReport } from './sender.js';

/** sysexits: the command line is wrong. */
const EXIT_USAGE = 64;

export const AGENT_USAGE = `usage: edgewatch agent [--config <file>] [--once [--dry-run]]

Reports this device's state (addresses, version, certificate, tunnels, services) to edgewatch.
  --config <file>  the agent's YAML (or JSON) configuration (docs/agent.md); EDGEWATCH_SERVER and
                   EDGEWATCH_TOKEN_FILE override it
  --once           send one report and exit: 0 when the server took it, 75 when it could not be reached
                   within 30 s, 78 when it refused the token, 65 when it refused the report
  --dry-run        with --once: print the report as JSON and send nothing (no server or token needed)`;

/**
 * `edgewatch agent`, in the main CLI and in the standalone dist/edgewatch-agent.mjs alike; resolves with
 * the exit status.
 */
export async function runAgentCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  log: AgentLog = stderrLog(env),
): Promise<number> {
  let options;
  try {
    options = parseArgs({
      args,
      options: {
        config: { type: 'string' },
        once: { type: 'boolean', default: false },
        'dry-run': { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${AGENT_USAGE}\n`);
    return EXIT_USAGE;
  }
  if (options.help) {
    process.stdout.write(`${AGENT_USAGE}\n`);
    return 0;
  }
  if (options['dry-run'] && !options.once) {
    process.stderr.write(`--dry-run goes with --once\n${AGENT_USAGE}\n`);
    return EXIT_USAGE;
  }
  const dryRun = options['dry-run'];
  let config: AgentConfig;
  try {
    config = loadAgentConfig(options.config, env, { credentials: !dryRun });
  } catch (error) {
    if (!(error instanceof AgentConfigError)) throw error;
    log.error(error.message);
    return EXIT_CONFIG;
  }
  const prober = new Prober(config, log, env);
  if (dryRun) {
    process.stdout.write(`${JSON.stringify(await prober.probe(), null, 2)}\n`);
    return 0;
  }
  const token = () => readToken(config.tokenFile);
  const parts = {
    settings: config,
    probe: () => prober.probe(),
    send: (value: string, report: Parameters<typeof sendReport>[2]) =>
      sendReport(config.server, value, report),
    readToken: token,
    log,
  };
  try {
    if (options.once) return await sendOnce({ ...parts, readToken: token });
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    const beats =
      config.heartbeatSeconds === undefined ? "the server's report interval" : `${config.heartbeatSeconds} s`;
    log.info(
      `reporting to ${config.server}: checks every ${config.checkSeconds} s, heartbeats every ${beats}`,
    );
    const code = await new Agent({ ...parts, pending: new PendingReport(config.stateDir, log) }).run(
      stop.signal,
    );
    if (stop.signal.aborted) log.info('stopped');
    return code;
  } catch (error) {
    if (!(error instanceof AgentConfigError)) throw error;
    log.error(error.message);
    return EXIT_CONFIG;
  }
}
