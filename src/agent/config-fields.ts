import { isIPv6 } from 'node:net';
import path from 'node:path';

/** A setting that is wrong: where it is (`tunnels[1].wireguard.interface`) and what is wrong with it. */
export class FieldProblem extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(field === '' ? problem : `${field}: ${problem}`);
    this.name = 'FieldProblem';
  }
}

/** Checks one value read from the config and turns it into what the agent uses. */
export type Parse<T> = (value: unknown, field: string) => T;

export const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A mapping of the config, its fields read by name. */
export class Fields {
  private constructor(
    private readonly path: string,
    private readonly values: Record<string, unknown>,
  ) {}

  /** Refuses fields not in `known`: a misspelt setting must not be ignored silently. */
  static of(value: unknown, path: string, known: readonly string[]): Fields {
    if (!isMapping(value)) throw new FieldProblem(path, 'must be a mapping (name: value)');
    const unknown = Object.keys(value).find((name) => !known.includes(name));
    if (unknown !== undefined)
      throw new FieldProblem(join(path, unknown), `is not a setting here (known: ${known.join(', ')})`);
    return new Fields(path, value);
  }

  field(name: string): string {
    return join(this.path, name);
  }

  /** An empty value (`name:` in YAML, null) counts as absent. */
  optional<T>(name: string, parse: Parse<T>): T | undefined {
    const value = this.values[name];
    return value === undefined || value === null ? undefined : parse(value, this.field(name));
  }

  required<T>(name: string, parse: Parse<T>): T {
    const value = this.optional(name, parse);
    if (value === undefined) throw new FieldProblem(this.field(name), 'is required');
    return value;
  }

  /** The one field of `names` that is set: an item says what it is by the field it sets. */
  oneOf<Name extends string>(names: readonly Name[]): Name {
    const set = names.filter((name) => this.values[name] !== undefined && this.values[name] !== null);
    if (set.length !== 1) throw new FieldProblem(this.path, `must set exactly one of ${names.join(', ')}`);
    return set[0]!;
  }
}

const join = (path: string, name: string) => (path === '' ? name : `${path}.${name}`);

export const text =
  (maxLength: number): Parse<string> =>
  (value, field) => {
    if (typeof value !== 'string') throw new FieldProblem(field, 'must be a string');
    if (value === '' || value.length > maxLength)
      throw new FieldProblem(field, `must be 1 to ${maxLength} characters`);
    return value;
  };

export const integer =
  (min: number, max: number): Parse<number> =>
  (value, field) => {
    if (typeof value !== 'number' || !Number.isInteger(value))
      throw new FieldProblem(field, 'must be a whole number');
    if (value < min || value > max) throw new FieldProblem(field, `must be between ${min} and ${max}`);
    return value;
  };

// At most a day: longer is a typo, and Node's timers cannot wait past 24.8 days.
export const seconds = integer(1, 86_400);

export const absolutePath: Parse<string> = (value, field) => {
  const file = text(4096)(value, field);
  if (!path.isAbsolute(file)) throw new FieldProblem(field, 'must be an absolute path');
  return file;
};

export const httpUrl: Parse<URL> = (value, field) => {
  const written = text(2048)(value, field);
  const url = URL.canParse(written) ? new URL(written) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw new FieldProblem(field, 'must be an http:// or https:// URL');
  return url;
};

/**
 * A name handed to a tool as one argument (a unit, an interface, a connection): one word, and never one
 * that the tool would take for an option.
 */
export const toolArgument =
  (maxLength: number): Parse<string> =>
  (value, field) => {
    const word = text(maxLength)(value, field);
    if (/[\s\p{Cc}]/u.test(word) || word.startsWith('-'))
      throw new FieldProblem(field, 'must be one word (no spaces) that does not start with "-"');
    return word;
  };

export const list =
  (maxItems = Infinity): Parse<unknown[]> =>
  (value, field) => {
    if (!Array.isArray(value)) throw new FieldProblem(field, 'must be a list');
    if (value.length > maxItems) throw new FieldProblem(field, `must have at most ${maxItems} items`);
    return value as unknown[];
  };

const HOST_PORT = /^(?:\[(?<ipv6>[^\]]+)\]|(?<host>[^\s:[\]]+)):(?<port>\d{1,5})$/;

/** `host:port`, an IPv6 address in brackets (`[::1]:5432`). */
export const hostPort: Parse<{ host: string; port: number }> = (value, field) => {
  const groups = HOST_PORT.exec(text(300)(value, field))?.groups;
  const host = groups?.ipv6 ?? groups?.host;
  const port = Number(groups?.port);
  if (host === undefined || (groups?.ipv6 !== undefined && !isIPv6(host)) || port < 1 || port > 65535)
    throw new FieldProblem(field, 'must be "host:port", an IPv6 address in brackets ("[::1]:5432")');
  return { host, port };
};
