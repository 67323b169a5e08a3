import type { ErrorDetail } from '../../http/errors.js';
import { TYPE_INFO, type NotificationType } from '../../notifications/types.js';

export const MAX_DURATION_MINUTES = 10_080; // one week

export interface SettingsInput {
  org_id: string;
  alert_me?: string;
  duration?: number;
  include_child?: boolean | 'true' | 'false';
}

export interface NormalizedSettings {
  orgId: string;
  alertMe: string | null;
  durationMinutes: number | null;
  includeChild: boolean;
}

/** Contract §4 rules for one type; problems are listed per field so one answer fixes them all. */
export function normalizeSettings(
  type: NotificationType,
  settings: SettingsInput,
): { ok: true; value: NormalizedSettings } | { ok: false; problems: ErrorDetail[] } {
  const info = TYPE_INFO[type];
  const problems: ErrorDetail[] = [];
  let alertMe: string | null = null;
  if (info.states.length === 0) {
    if (settings.alert_me !== undefined) {
      problems.push({ field: 'settings.alert_me', message: `is not used by ${type}; leave it out` });
    }
  } else if (settings.alert_me === undefined || settings.alert_me.trim() === '') {
    problems.push({
      field: 'settings.alert_me',
      message: `is required for ${type}: one or more of ${info.states.join(', ')}`,
    });
  } else {
    const states = [...new Set(settings.alert_me.split(',').map((state) => state.trim()))];
    const unknown = states.filter((state) => !info.states.includes(state));
    if (unknown.length > 0) {
      problems.push({
        field: 'settings.alert_me',
        message: `has unknown state(s) ${unknown.map((s) => `"${s}"`).join(', ')}; ${type} knows ${info.states.join(', ')}`,
      });
    }
    alertMe = info.states.filter((state) => states.includes(state)).join(',');
  }
  let durationMinutes: number | null = null;
  if (info.takesDuration) durationMinutes = settings.duration ?? 0;
  else if (settings.duration !== undefined) {
    problems.push({ field: 'settings.duration', message: `is not used by ${type}; leave it out` });
  }
  if (problems.length > 0) return { ok: false, problems };
  const includeChild =
    settings.include_child === undefined
      ? true
      : settings.include_child === true || settings.include_child === 'true';
  return { ok: true, value: { orgId: settings.org_id, alertMe, durationMinutes, includeChild } };
}
