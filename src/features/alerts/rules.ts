import type { ErrorDetail } from '../../http/errors.js';
import { allConditions, TYPE_INFO, type NotificationType } from '../notifications/types.js';
import { normalizeGrouping, type Grouping, type GroupingInput } from './grouping.js';

export const MAX_DURATION_MINUTES = 10_080; // one week

export interface SettingsInput extends GroupingInput {
  org_id: string;
  alert_me?: string;
  duration?: number;
  include_child?: boolean | 'true' | 'false';
  suppress_when_node_unreachable?: boolean | 'true' | 'false';
  /** Scopes; null means none (so an edit can remove one). */
  node_id?: string | null;
  tunnel_id?: string | null;
  pod_id?: string | null;
  network_id?: string | null;
}

export interface Scopes {
  nodeId: string | null;
  tunnelId: string | null;
  serviceId: string | null;
}

export interface NormalizedSettings {
  orgId: string;
  alertMe: string;
  durationMinutes: number | null;
  includeChild: boolean;
  suppressWhenNodeUnreachable: boolean;
  scopes: Scopes;
  grouping: Grouping;
}

/** Which scope fits which type: a node fits all, a tunnel or a service only its own kind of change. */
function scopeProblems(type: NotificationType, settings: SettingsInput): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  if (settings.network_id != null) {
    problems.push({
      field: 'settings.network_id',
      message:
        'is not supported: networks are not modelled; scope the alert with node_id, tunnel_id or pod_id',
    });
  }
  if (settings.tunnel_id != null && type !== 'TUNNEL_STATE_CHANGE') {
    problems.push({
      field: 'settings.tunnel_id',
      message: `only scopes TUNNEL_STATE_CHANGE alerts, not ${type}`,
    });
  }
  if (settings.pod_id != null && type !== 'SERVICE_STATE_CHANGE') {
    problems.push({
      field: 'settings.pod_id',
      message: `only scopes SERVICE_STATE_CHANGE alerts, not ${type}`,
    });
  }
  return problems;
}

/** The conditions asked for, in the type's order without repeats; or what is wrong with them. */
function normalizeAlertMe(type: NotificationType, alertMe: string | undefined): string | ErrorDetail {
  const known = TYPE_INFO[type].conditions;
  if (alertMe === undefined) return allConditions(type);
  const asked = alertMe.split(',').map((condition) => condition.trim());
  const field = 'settings.alert_me';
  if (asked.includes('')) {
    return {
      field,
      message: `has an empty entry; list one or more of ${known.join(', ')}, or leave it out for all of them`,
    };
  }
  const unknown = [...new Set(asked.filter((condition) => !known.includes(condition)))];
  if (unknown.length > 0) {
    return {
      field,
      message: `has unknown condition(s) ${unknown.map((c) => `"${c}"`).join(', ')}; ${type} knows ${known.join(', ')}`,
    };
  }
  return known.filter((condition) => asked.includes(condition)).join(',');
}

/**
 * The settings rules for one type (docs/rules/alerts-and-fleet.md#settings); problems are listed per field so
 * one answer fixes them all. `alert_me` defaults to every condition of the type. `duration` is kept only by
 * the types that use it: the published client sends it with every type, so the others accept it and drop it.
 */
export function normalizeSettings(
  type: NotificationType,
  settings: SettingsInput,
): { ok: true; value: NormalizedSettings } | { ok: false; problems: ErrorDetail[] } {
  const alertMe = normalizeAlertMe(type, settings.alert_me);
  const grouping = normalizeGrouping(settings);
  const problems = [
    ...(typeof alertMe === 'string' ? [] : [alertMe]),
    ...scopeProblems(type, settings),
    ...(grouping.ok ? [] : grouping.problems),
  ];
  if (typeof alertMe !== 'string' || !grouping.ok || problems.length > 0) return { ok: false, problems };
  const durationMinutes = TYPE_INFO[type].takesDuration ? (settings.duration ?? 0) : null;
  const flag = (value: boolean | 'true' | 'false' | undefined) =>
    value === undefined ? true : value === true || value === 'true';
  const includeChild = flag(settings.include_child);
  const suppressWhenNodeUnreachable = flag(settings.suppress_when_node_unreachable);
  const scopes = {
    nodeId: settings.node_id ?? null,
    tunnelId: settings.tunnel_id ?? null,
    serviceId: settings.pod_id ?? null,
  };
  return {
    ok: true,
    value: {
      orgId: settings.org_id,
      alertMe,
      durationMinutes,
      includeChild,
      suppressWhenNodeUnreachable,
      scopes,
      grouping: grouping.value,
    },
  };
}
