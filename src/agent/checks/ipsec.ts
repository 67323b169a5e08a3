import { excerpt, outputLines, parsed, unreadable, type Parsed } from './result.js';
import { connected, terminated, type TunnelCheck } from './tunnel.js';

/** A section of a vici message: key → value, list or nested section. */
type ViciSection = Map<string, string | string[] | ViciSection>;

export interface ChildSa {
  /** As swanctl lists it: the child's name and its unique id, e.g. `dc2-7`. */
  name: string;
  state: string;
}

export interface IkeSa {
  name: string;
  state: string;
  children: ChildSa[];
}

/** While rekeying, the old SA still carries the traffic; counting it as down would flap every rekey. */
const IKE_UP = new Set(['ESTABLISHED', 'REKEYING']);
const CHILD_UP = new Set(['INSTALLED', 'REKEYING']);

/**
 * Reads `swanctl --list-sas --raw`: one `list-sa event {…}` line per IKE SA, then `list-sas reply {}` once
 * every SA is listed (without it, the output was cut short).
 */
export function parseListSas(output: string): Parsed<IkeSa[]> {
  const sas: IkeSa[] = [];
  for (const line of outputLines(output)) {
    const message = readViciLine(line);
    if ('error' in message) return message;
    if (message.value.label === 'list-sas reply') return parsed(sas);
    if (message.value.label !== 'list-sa event') return unreadable(`unexpected message ${excerpt(line)}`);
    const sa = ikeSaOf(message.value.body);
    if (sa === undefined) return unreadable(`no IKE SA in ${excerpt(line)}`);
    sas.push(sa);
  }
  return unreadable(output.trim() === '' ? 'no output' : 'output cut short: no "list-sas reply"');
}

/**
 * CONNECTED when an IKE SA named `ikeName` is established and has a child SA installed (several SAs of one
 * name are listed while one replaces another; any of them will do).
 */
export function ipsecState(output: string, ikeName: string): TunnelCheck {
  const sas = parseListSas(output);
  if ('error' in sas) return terminated(`swanctl output unreadable: ${sas.error}`);
  const named = sas.value.filter((sa) => sa.name === ikeName);
  if (named.length === 0) return terminated(`no IKE SA named "${ikeName}"`);
  if (named.some((sa) => IKE_UP.has(sa.state) && sa.children.some((child) => CHILD_UP.has(child.state)))) {
    return connected();
  }
  return terminated(named.map(describeDown).join('; '));
}

function describeDown(sa: IkeSa): string {
  if (!IKE_UP.has(sa.state)) return `IKE SA "${sa.name}" is ${sa.state}`;
  if (sa.children.length === 0) return `IKE SA "${sa.name}" is ${sa.state} without child SAs`;
  const children = sa.children.map((child) => `${child.name} ${child.state}`).join(', ');
  return `IKE SA "${sa.name}" is ${sa.state} but no child SA is installed (${children})`;
}

function ikeSaOf(body: ViciSection): IkeSa | undefined {
  const [entry, ...others] = body;
  if (entry === undefined || others.length > 0) return undefined;
  const [name, sa] = entry;
  if (!(sa instanceof Map)) return undefined;
  const childSas = sa.get('child-sas');
  const children =
    childSas instanceof Map ? [...childSas].map(([childName, child]) => childOf(childName, child)) : [];
  return { name, state: text(sa.get('state')), children };
}

function childOf(name: string, child: string | string[] | ViciSection): ChildSa {
  return { name, state: child instanceof Map ? text(child.get('state')) : '' };
}

function text(value: string | string[] | ViciSection | undefined): string {
  return typeof value === 'string' ? value : '';
}

// The raw format (vici_message_t's dump without pretty printing): `label {key=value list=[a b] name {…}}`,
// items apart by one space. Values are printed as they are, spaces included (an identity such as
// `C=DE, O=Example, CN=gw`), so a value ends only where the next item or the section's end begins. Keys
// are lower case; upper case after a space is taken as part of a value.
const SECTION_START = /([^\s{}=[\]]+) \{/y;
const LIST_START = /([a-z0-9][a-z0-9._-]*)=\[/y;
const KEY_VALUE = /([a-z0-9][a-z0-9._-]*)=(.*?)(?= [a-z0-9][a-z0-9._-]*=| [^\s{}=[\]]+ \{|\}(?:[ }]|$))/y;
const LIST_ITEMS = /([^\]]*)\]/y;

interface Cursor {
  line: string;
  at: number;
}

function readViciLine(line: string): Parsed<{ label: string; body: ViciSection }> {
  const opening = /^(list-sa event|list-sas reply) \{/.exec(line);
  if (opening === null) return unreadable(`not a raw vici message: ${excerpt(line)}`);
  const cursor = { line, at: opening[0].length };
  const body = readSection(cursor);
  if (body === undefined || cursor.at !== line.length) return unreadable(`malformed: ${excerpt(line)}`);
  return parsed({ label: opening[1]!, body });
}

/** Reads items up to and including the `}` that closes the section; undefined when the line breaks off. */
function readSection(cursor: Cursor): ViciSection | undefined {
  const section: ViciSection = new Map();
  while (cursor.at < cursor.line.length) {
    if (cursor.line[cursor.at] === '}') {
      cursor.at++;
      return section;
    }
    if (cursor.line[cursor.at] === ' ') cursor.at++;
    const item = readItem(cursor);
    if (item === undefined) return undefined;
    // The first wins: the state comes before any value that could look like a key.
    if (!section.has(item[0])) section.set(item[0], item[1]);
  }
  return undefined;
}

function readItem(cursor: Cursor): [string, string | string[] | ViciSection] | undefined {
  const section = match(SECTION_START, cursor);
  if (section !== undefined) {
    const nested = readSection(cursor);
    return nested === undefined ? undefined : [section[1]!, nested];
  }
  const list = match(LIST_START, cursor);
  if (list !== undefined) {
    const items = match(LIST_ITEMS, cursor);
    return items === undefined ? undefined : [list[1]!, items[1]!.split(' ').filter((item) => item !== '')];
  }
  const keyValue = match(KEY_VALUE, cursor);
  return keyValue === undefined ? undefined : [keyValue[1]!, keyValue[2]!];
}

function match(pattern: RegExp, cursor: Cursor): RegExpExecArray | undefined {
  pattern.lastIndex = cursor.at;
  const found = pattern.exec(cursor.line);
  if (found === null) return undefined;
  cursor.at = pattern.lastIndex;
  return found;
}
