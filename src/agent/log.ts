/** The agent's log: lines on stderr, which systemd's journal takes with their priority. */
export interface AgentLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

const PRIORITIES = { error: 3, warn: 4, info: 6 } as const;

/**
 * Under systemd (JOURNAL_STREAM is set) each line starts with its syslog priority, `<4>`, which the journal
 * reads as the level; elsewhere with the level's name.
 */
export function stderrLog(env: NodeJS.ProcessEnv = process.env): AgentLog {
  const journal = env.JOURNAL_STREAM !== undefined;
  const line = (level: keyof typeof PRIORITIES) => (message: string) => {
    const prefix = journal ? `<${PRIORITIES[level]}>` : `${new Date().toISOString()} ${level}: `;
    process.stderr.write(`${prefix}${message}\n`);
  };
  return { info: line('info'), warn: line('warn'), error: line('error') };
}

/** Says a problem once, when it starts or changes, and once more when it ends: not at every check. */
export class ProblemLog {
  private readonly current = new Map<string, string>();

  constructor(private readonly log: AgentLog) {}

  /** The item's problem now, or undefined when it has none. */
  set(item: string, problem: string | undefined): void {
    const before = this.current.get(item);
    if (problem === before) return;
    if (problem === undefined) {
      this.current.delete(item);
      this.log.info(`${item}: the check works again`);
    } else {
      this.current.set(item, problem);
      this.log.warn(`${item}: ${problem}`);
    }
  }
}
