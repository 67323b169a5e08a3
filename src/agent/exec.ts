import { execFile, type ExecFileException } from 'node:child_process';

/** What a tool printed, or why it could not be read. */
export type ToolOutput = { stdout: string } | { error: string };

const MAX_OUTPUT_BYTES = 1024 * 1024;

/**
 * Runs a program directly (no shell, so nothing in the config is ever parsed as a command line), in the C
 * locale so that its output is the one the parsers know, and kills it after `timeoutMs`.
 */
export function runTool(file: string, args: readonly string[], timeoutMs: number): Promise<ToolOutput> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
        timeout: timeoutMs,
        maxBuffer: MAX_OUTPUT_BYTES,
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        if (error === null) return resolve({ stdout });
        resolve({ error: describeFailure(file, error, stderr) });
      },
    );
  });
}

function describeFailure(file: string, error: ExecFileException, stderr: string) {
  if (error.code === 'ENOENT') return `${file} is not installed (not found on PATH)`;
  if (error.code === 'EACCES') return `${file} cannot be run (permission denied)`;
  if (error.killed) return `${file} did not answer in time`;
  const said = firstLine(stderr);
  return `${file} exited with ${typeof error.code === 'number' ? `status ${error.code}` : error.message}${said ? `: ${said}` : ''}`;
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]?.slice(0, 200) ?? '';
}

/** Runs a program and tells only whether it exited 0 (a command check); why not, otherwise. */
export async function exitsZero(argv: readonly string[], timeoutMs: number): Promise<string | undefined> {
  const [file, ...args] = argv;
  const output = await runTool(file!, args, timeoutMs);
  return 'error' in output ? output.error : undefined;
}
