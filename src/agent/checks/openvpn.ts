import { excerpt, outputLines, parsed, unreadable, type Parsed } from './result.js';
import { connected, terminated, type TunnelCheck } from './tunnel.js';

/** What a server's status file says (`--status <file> <seconds>` with `--status-version 2` or `3`). */
export interface OpenvpnStatus {
  /** When OpenVPN wrote the file, in Unix seconds (its TIME line). */
  writtenAt: number;
  /** The Common Name of each connected client, in the order listed. */
  clients: string[];
}

/**
 * Reads a server's status file, version 2 (fields apart by commas) or 3 (by tabs). Version 1 has no Unix
 * time, only local time without a zone, and a client's file (`OpenVPN STATISTICS`) only counts bytes, so
 * both are refused with the reason.
 */
export function parseOpenvpnStatus(text: string): Parsed<OpenvpnStatus> {
  const lines = outputLines(text);
  const first = lines[0];
  if (first === undefined) return unreadable('empty status file');
  const separator = separatorOf(first);
  if (typeof separator !== 'string') return separator;
  let writtenAt: number | undefined;
  const clients: string[] = [];
  for (const line of lines) {
    const [kind, ...fields] = line.split(separator);
    if (kind === 'END') {
      return writtenAt === undefined ? unreadable('no readable TIME line') : parsed({ writtenAt, clients });
    }
    if (kind === 'TIME') writtenAt = unixSeconds(fields.at(-1));
    if (kind === 'CLIENT_LIST' && fields[0] !== undefined) clients.push(fields[0]);
  }
  return unreadable('status file cut short: no END line');
}

function separatorOf(firstLine: string): string | { error: string } {
  if (firstLine.startsWith('TITLE,')) return ',';
  if (firstLine.startsWith('TITLE\t')) return '\t';
  if (firstLine === 'OpenVPN CLIENT LIST') {
    return unreadable('status file version 1 has no Unix time: run the server with --status-version 2 or 3');
  }
  if (firstLine === 'OpenVPN STATISTICS') {
    return unreadable(
      "a client's status file does not say whether it is connected: use the management state",
    );
  }
  return unreadable(`not an OpenVPN status file: ${excerpt(firstLine)}`);
}

function unixSeconds(text: string | undefined): number | undefined {
  return text !== undefined && /^\d{1,12}$/.test(text) ? Number(text) : undefined;
}

/**
 * A server's tunnel, from its status file: CONNECTED when the file was written less than `maxAgeSeconds`
 * ago and lists a client (`commonName`, when given). A stopped or hung server leaves its last file behind,
 * so the limit must exceed the server's status interval (60 s unless set).
 */
export function openvpnStatusState(
  text: string,
  options: { maxAgeSeconds: number; nowSeconds: number; commonName?: string },
): TunnelCheck {
  const status = parseOpenvpnStatus(text);
  if ('error' in status) return terminated(`OpenVPN status unreadable: ${status.error}`);
  const age = options.nowSeconds - status.value.writtenAt;
  if (age >= options.maxAgeSeconds) {
    return terminated(`status file stale: written ${age} s ago (limit ${options.maxAgeSeconds} s)`);
  }
  const { commonName } = options;
  if (commonName === undefined) {
    return status.value.clients.length > 0 ? connected() : terminated('no client connected');
  }
  return status.value.clients.includes(commonName)
    ? connected()
    : terminated(`client "${commonName}" is not connected`);
}

/** One line of the management interface's state history. */
export interface OpenvpnStateEntry {
  /** Unix seconds. */
  at: number;
  /** CONNECTING, WAIT, AUTH, GET_CONFIG, ASSIGN_IP, ADD_ROUTES, CONNECTED, RECONNECTING, EXITING, … */
  state: string;
  /** SUCCESS or ERROR for CONNECTED; the cause for RECONNECTING and EXITING (e.g. `ping-restart`). */
  detail: string;
}

const STATE_LINE = /^(\d{1,12}),([A-Z_]+),([^,]*)/;

/**
 * Reads the reply to the management interface's `state` (or `state all`, or `state N`) command: the latest
 * entry. OpenVPN prints the history oldest first and ends it with END; lines starting with `>` are
 * notifications (the greeting, real-time state) that may arrive in between.
 */
export function parseManagementState(reply: string): Parsed<OpenvpnStateEntry> {
  let latest: OpenvpnStateEntry | undefined;
  for (const line of outputLines(reply)) {
    if (line.startsWith('>')) continue;
    if (line === 'END') return latest === undefined ? unreadable('no state in the reply') : parsed(latest);
    const entry = STATE_LINE.exec(line);
    if (entry === null) return unreadable(`not a state line: ${excerpt(line)}`);
    latest = { at: Number(entry[1]), state: entry[2]!, detail: entry[3]! };
  }
  return unreadable(reply.trim() === '' ? 'no reply' : 'reply cut short: no END line');
}

/** A client's tunnel, from the management interface: CONNECTED when its latest state is CONNECTED. */
export function openvpnManagementState(reply: string): TunnelCheck {
  const latest = parseManagementState(reply);
  if ('error' in latest) return terminated(`OpenVPN management reply unreadable: ${latest.error}`);
  const { state, detail } = latest.value;
  return state === 'CONNECTED'
    ? connected()
    : terminated(`OpenVPN is ${state}${detail ? ` (${detail})` : ''}`);
}
