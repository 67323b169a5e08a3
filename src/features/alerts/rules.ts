import type { ErrorDetail } from '../../http/errors.js';
import { allConditions, TYPE_INFO, type NotificationType } from '../../notifications/types.js';

export const MAX_DURATION_MINUTES = 10_080; // one week

export interface SettingsInput {
  org_id: string;
  alert_me?: string;
  duration?: number;
  include_child?: boolean | 'true' | 'false';
}

export interface NormalizedSettings {
  orgId: string;
  alertMe: string;
  durationMinutes: number | null;
  includeChild: boolean;
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
 * Contract §4 rules for one type; problems are listed per field so one answer fixes them all.
 * `alert_me` defaults to every condition of the type. `duration` is kept only by the types that use
 * it: the published client sends it with every type, so the others accept it and drop it.
 */
export function normalizeSettings(
  type: NotificationType,
  settings: SettingsInput,
): { ok: true; value: NormalizedSettings } | { ok: false; problems: ErrorDetail[] } {
  const alertMe = normalizeAlertMe(type, settings.alert_me);
  if (typeof alertMe !== 'string') return { ok: false, problems: [alertMe] };
  const durationMinutes = TYPE_INFO[type].takesDuration ? (settings.duration ?? 0) : null;
  const includeChild =
    settings.include_child === undefined
      ? true
      : settings.include_child === true || settings.include_child === 'true';
  return { ok: true, value: { orgId: settings.org_id, alertMe, durationMinutes, includeChild } };
}
