import { outputLines } from './result.js';

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;
// Inside double quotes, as in the shell, a backslash escapes only these; elsewhere it stays.
const ESCAPABLE_IN_DOUBLE_QUOTES = new Set(['"', '\\', '$', '`']);

/**
 * Reads os-release: KEY=value lines whose values follow shell quoting ("…" with \" \\ \$ \`, '…' taken as
 * written, unquoted with backslash escapes). Comments, blank lines and lines that are not assignments are
 * skipped, as the format asks of its readers, so there is nothing to fail.
 */
export function parseOsRelease(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of outputLines(text)) {
    const assignment = ASSIGNMENT.exec(line.trim());
    if (assignment === null) continue;
    const value = shellWord(assignment[2]!);
    if (value !== undefined) fields.set(assignment[1]!, value);
  }
  return fields;
}

/** PRETTY_NAME, else NAME and VERSION (or NAME alone), else undefined. */
export function osPrettyName(text: string): string | undefined {
  const fields = parseOsRelease(text);
  const pretty = fields.get('PRETTY_NAME');
  if (pretty) return pretty;
  const name = fields.get('NAME');
  if (!name) return undefined;
  const version = fields.get('VERSION');
  return version ? `${name} ${version}` : name;
}

/** The first shell word of `raw` with its quotes and escapes undone; undefined when a quote is not closed. */
function shellWord(raw: string): string | undefined {
  let word = '';
  let at = 0;
  while (at < raw.length && !/\s/.test(raw[at]!)) {
    const char = raw[at]!;
    if (char === "'") {
      const close = raw.indexOf("'", at + 1);
      if (close < 0) return undefined;
      word += raw.slice(at + 1, close);
      at = close + 1;
    } else if (char === '"') {
      const quoted = doubleQuoted(raw, at + 1);
      if (quoted === undefined) return undefined;
      word += quoted.text;
      at = quoted.end + 1;
    } else if (char === '\\' && at + 1 < raw.length) {
      word += raw[at + 1];
      at += 2;
    } else {
      word += char;
      at++;
    }
  }
  return word;
}

function doubleQuoted(raw: string, start: number): { text: string; end: number } | undefined {
  let text = '';
  for (let at = start; at < raw.length; at++) {
    const char = raw[at]!;
    if (char === '"') return { text, end: at };
    const next = raw[at + 1];
    if (char === '\\' && next !== undefined && ESCAPABLE_IN_DOUBLE_QUOTES.has(next)) {
      text += next;
      at++;
    } else {
      text += char;
    }
  }
  return undefined;
}
