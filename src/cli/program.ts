import { Command, Option } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { connectDatabase, isUniqueViolation } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { issueApiKey } from '../features/apikeys/service.js';
import { bootstrap } from '../features/bootstrap/service.js';
import { normalizeEmail } from '../features/users/presenter.js';
import { findUserByEmail } from '../features/users/repo.js';
import { resendVerification } from '../features/users/service.js';
import { AppError } from '../http/errors.js';
import { createLogger } from '../observability/logger.js';
import { closeContext, openContext } from '../runtime.js';
import { countJobs, listDead, reviveDead } from '../jobs/repo.js';
import { isoUtc } from '../lib/clock.js';
import { SEND_EMAIL } from '../mail/mailer.js';
import { RoleError, ROLES, serve, type Role } from '../server.js';
import { createWorker } from '../background.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_FLAP_RATE,
  DEFAULT_INTERVAL,
  DEFAULT_NODES,
  DEFAULT_URL,
  KEY_VARIABLE,
  OptionError,
  parseSimulateOptions,
  type RawSimulateOptions,
} from '../simulator/options.js';
import { terminalProgress, type ProgressOutput } from '../simulator/progress.js';
import { simulate, SimulatorError } from '../simulator/simulate.js';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: Record<string, string | undefined>;
}

export const processIo: CliIo = {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
  env: process.env,
};

/** An expected failure: printed as one line, exit code 1, no stack trace. */
export class CliError extends Error {}

/** An option with a value that cannot be used: printed as one line, exit code 2. */
export class UsageError extends Error {}

function config(io: CliIo): Config {
  return loadConfig(io.env);
}

async function withContext<T>(io: CliIo, run: (ctx: Awaited<ReturnType<typeof openContext>>) => Promise<T>) {
  const cfg = config(io);
  const ctx = await openContext(
    cfg,
    createLogger(cfg.logLevel === 'info' ? 'warn' : cfg.logLevel, process.stderr),
  );
  try {
    return await run(ctx);
  } finally {
    await closeContext(ctx);
  }
}

export function buildProgram(io: CliIo = processIo): Command {
  const program = new Command('edgewatch')
    .description('Users, roles, API keys, alert subscriptions and verified webhooks for an edge fleet.')
    .showHelpAfterError()
    // Before any subcommand exists, so that every subcommand inherits it: help and usage errors then
    // come back to runCli as an exit code instead of ending the process.
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });

  const runService = async (role: Role) => {
    const cfg = config(io);
    const logger = createLogger(cfg.logLevel);
    const server = await serve(cfg, logger, role).catch((error: unknown) => {
      throw error instanceof RoleError ? new CliError(error.message) : error;
    });
    const stop = (signal: string) => {
      logger.info(`${signal} received: finishing in-flight requests and jobs, then stopping.`);
      server.close().then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  };

  program
    .command('serve')
    .description('Run the HTTP API and the background worker (configuration from the environment)')
    .addOption(
      new Option('--role <role>', 'api, worker, or both in one process (all); api and worker need PostgreSQL')
        .choices(ROLES)
        .default('all'),
    )
    .action((options: { role: Role }) => runService(options.role));

  program
    .command('worker')
    .description('Run only the job worker (PostgreSQL; the same as serve --role worker)')
    .action(() => runService('worker'));

  const jobs = program
    .command('jobs')
    .description('Show the job queue: counts by kind and state, and the dead jobs')
    .action(async () => {
      await withContext(io, async (ctx) => {
        const counts = await countJobs(ctx.db, ctx.clock.now());
        if (counts.length === 0) io.out('No jobs.');
        for (const row of counts) io.out(`${row.kind.padEnd(24)} ${row.state.padEnd(10)} ${row.count}`);
        const dead = await listDead(ctx.db, 100);
        if (dead.length > 0) io.out(`\nDead jobs (revive one with: edgewatch jobs retry <id>):`);
        for (const job of dead) {
          io.out(
            `${job.id}  ${job.kind}  ${job.attempts} attempts  ${isoUtc(job.created_at)}  ${job.last_error ?? ''}`,
          );
        }
      });
    });

  jobs
    .command('retry <id>')
    .description('Queue a dead job again, with a fresh count of attempts')
    .action(async (id: string) => {
      await withContext(io, async (ctx) => {
        const revived = await reviveDead(ctx.db, id, ctx.clock.now()).catch((error: unknown) => {
          if (!isUniqueViolation(error)) throw error;
          throw new CliError(
            `Job ${id} cannot be queued again: a newer job of its kind holds its key, and does its work.`,
          );
        });
        if (!revived) throw new CliError(`No dead job with the id ${id}.`);
        io.out(`Job ${id} is queued again.`);
      });
    });

  program
    .command('migrate')
    .description('Apply pending database migrations and exit')
    .action(async () => {
      const cfg = config(io);
      const db = connectDatabase(cfg.database);
      try {
        const report = await migrateToLatest(db);
        io.out(
          report.applied.length === 0 ? 'Database is up to date.' : `Applied: ${report.applied.join(', ')}`,
        );
      } finally {
        await db.destroy();
      }
    });

  program
    .command('init')
    .description('Create the root organization and the admin user, and print the admin API key')
    .option('--org <name>', 'name of the root organization', 'Root organization')
    .option('--email <email>', 'e-mail address of the admin user', 'admin@edgewatch.local')
    .option('--name <name>', 'name of the admin user', 'Administrator')
    .action(async (options: { org: string; email: string; name: string }) => {
      await withContext(io, async (ctx) => {
        const result = await bootstrap(ctx, {
          orgName: options.org,
          adminEmail: options.email,
          adminName: options.name,
          presetKey: ctx.config.bootstrapApiKey,
        });
        if (result.kind !== 'created')
          throw new CliError('Already initialized: the database has an organization.');
        io.out(`Created organization "${options.org}" and admin ${result.adminEmail}.`);
        io.out(`Admin API key (shown once): ${result.key}`);
      });
    });

  program
    .command('apikey')
    .description('Manage API keys')
    .command('create')
    .description('Create an API key for a user and print it')
    .requiredOption('--email <email>', "the user's e-mail address")
    .option('--name <name>', 'a label for the key', 'CLI')
    .action(async (options: { email: string; name: string }) => {
      await withContext(io, async (ctx) => {
        const user = await findUserByEmail(ctx.db, normalizeEmail(options.email));
        if (user === undefined) throw new CliError(`No user with the e-mail address ${options.email}.`);
        const issued = await issueApiKey(ctx.db, ctx.clock.now(), user.id, options.name);
        io.out(`API key for ${user.email} (shown once): ${issued.key}`);
      });
    });

  program
    .command('user')
    .description('Manage users')
    .command('resend-verification')
    .description('Send a user who has not verified their e-mail address a new verification link')
    .requiredOption('--email <email>', "the user's e-mail address")
    .action(async (options: { email: string }) => {
      await withContext(io, async (ctx) => {
        const sent = await resendVerification(ctx, options.email).catch((error: unknown) => {
          if (!(error instanceof AppError)) throw error;
          throw new CliError(
            error.statusCode === 404
              ? `No user with the e-mail address ${options.email}.`
              : `${options.email}: ${error.message}`,
          );
        });
        if (ctx.config.smtpUrl === undefined) {
          io.out(`No SMTP_URL is set: give ${sent.email} this link (works once, for 24 hours): ${sent.link}`);
          return;
        }
        // Sent now when the SMTP server takes it; otherwise the service's workers retry it.
        await createWorker(ctx, [SEND_EMAIL]).runDue();
        io.out(`A new verification link is on its way to ${sent.email} (it works once, for 24 hours).`);
      });
    });

  program
    .command('simulate')
    .description(
      'Simulate a fleet against a running service: register nodes (or reuse those registered before), ' +
        'then report for them with random tunnel and service flaps',
    )
    .option('--url <url>', 'the service', DEFAULT_URL)
    .option('--key <key>', `an API key allowed fleet:read and fleet:write (default: $${KEY_VARIABLE})`)
    .option('--nodes <n>', 'how many nodes: sim-node-1 … sim-node-<n>', DEFAULT_NODES)
    .option(
      '--interval <time>',
      'each node reports once per interval, spread evenly (30, 30s, 500ms, 1m)',
      DEFAULT_INTERVAL,
    )
    .option(
      '--flap-rate <rate>',
      'the chance per report that a tunnel or service goes down for an interval',
      DEFAULT_FLAP_RATE,
    )
    .option('--duration <time>', 'stop after reporting this long (default: until Ctrl-C or SIGTERM)')
    .option('--concurrency <n>', 'requests under way at most', DEFAULT_CONCURRENCY)
    .action(async (raw: RawSimulateOptions) => {
      let options;
      try {
        options = parseSimulateOptions(raw, io.env);
      } catch (error) {
        throw error instanceof OptionError ? new UsageError(error.message) : error;
      }
      const progress: ProgressOutput =
        io === processIo ? terminalProgress(process.stderr) : { line: (text) => io.err(text) };
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      // Once each: the same signal a second time ends the process at once.
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        await simulate(options, { out: (line) => io.out(line), progress }, stop.signal);
      } catch (error) {
        throw error instanceof SimulatorError ? new CliError(error.message) : error;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });

  program
    .command('agent')
    .description(
      "Report this device's state to edgewatch (docs/agent.md); `edgewatch agent --help` for its options",
    )
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[options...]')
    .action(async (args: string[]) => {
      const { runAgentCli } = await import('../agent/cli.js');
      throw new ExitStatus(await runAgentCli(args, io.env));
    });

  return program;
}

/** A command's own exit status (the agent's sysexits codes), passed through as it is. */
class ExitStatus extends Error {
  constructor(readonly status: number) {
    super(`exit status ${status}`);
  }
}

/** Runs the CLI; returns the exit code instead of exiting, so tests can call it. */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof ExitStatus) return error.status;
    if (error instanceof CliError || error instanceof ConfigError) {
      io.err(error.message);
      return 1;
    }
    if (error instanceof UsageError) {
      io.err(error.message);
      return 2;
    }
    const code = (error as { code?: string; exitCode?: number }).code;
    if (typeof code === 'string' && code.startsWith('commander.'))
      return (error as { exitCode: number }).exitCode;
    io.err(`edgewatch: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
