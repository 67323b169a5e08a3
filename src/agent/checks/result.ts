/** What a parser read from a tool's output, or why it could not read it. Parsers never throw on bad input. */
export type Parsed<T> = { value: T } | { error: string };

export const parsed = <T>(value: T): Parsed<T> => ({ value });
export const unreadable = (error: string): { error: string } => ({ error });

/** The lines of a tool's output, without line ends (LF or CRLF), trailing blanks or empty lines. */
export function outputLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line !== '');
}

/** A piece of output quoted in a reason: short, so that a log line stays readable. */
export function excerpt(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}
