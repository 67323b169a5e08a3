import { describe, expect, it } from 'vitest';
import { MAX_DURATION_MINUTES, normalizeSettings, type SettingsInput } from '../src/features/alerts/rules.js';
import { NOTIFICATION_TYPES, type NotificationType } from '../src/notifications/types.js';

const ORG = 'org-1';

function fieldsOf(type: NotificationType, settings: Omit<SettingsInput, 'org_id'>): string[] {
  const result = normalizeSettings(type, { org_id: ORG, ...settings });
  return result.ok ? [] : result.problems.map((problem) => problem.field);
}

describe('normalizeSettings', () => {
  it('knows the seven notification types', () => {
    expect([...NOTIFICATION_TYPES].sort()).toEqual([
      'CERT_EXPIRY',
      'HEADLESS_EXPIRY',
      'NODE_IP_CHANGE',
      'NODE_STATE_CHANGE',
      'NODE_UPGRADE',
      'SERVICE_STATE_CHANGE',
      'TUNNEL_STATE_CHANGE',
    ]);
    expect(MAX_DURATION_MINUTES).toBe(10_080);
  });

  it.each([
    ['NODE_STATE_CHANGE', 'ALIVE,UNREACHABLE'],
    ['TUNNEL_STATE_CHANGE', 'CONNECTED,DISCONNECTED'],
    ['SERVICE_STATE_CHANGE', 'HEALTHY,UNHEALTHY'],
  ] as const)('accepts the states of %s and nothing else', (type, states) => {
    const result = normalizeSettings(type, { org_id: ORG, alert_me: states, duration: 7 });
    expect(result).toEqual({
      ok: true,
      value: { orgId: ORG, alertMe: states, durationMinutes: 7, includeChild: true },
    });
    const others = ['ALIVE', 'UNREACHABLE', 'CONNECTED', 'DISCONNECTED', 'HEALTHY', 'UNHEALTHY'].filter(
      (state) => !states.split(',').includes(state),
    );
    for (const state of others) expect(fieldsOf(type, { alert_me: state })).toEqual(['settings.alert_me']);
    expect(fieldsOf(type, {})).toEqual(['settings.alert_me']);
    expect(fieldsOf(type, { alert_me: '   ' })).toEqual(['settings.alert_me']);
  });

  it('orders, trims and de-duplicates the states', () => {
    const result = normalizeSettings('NODE_STATE_CHANGE', {
      org_id: ORG,
      alert_me: ' UNREACHABLE,ALIVE , UNREACHABLE',
    });
    expect(result.ok && result.value.alertMe).toBe('ALIVE,UNREACHABLE');
  });

  it('names every unknown state in one problem', () => {
    const result = normalizeSettings('TUNNEL_STATE_CHANGE', { org_id: ORG, alert_me: 'UP,CONNECTED,DOWN' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]?.message).toContain('"UP"');
    expect(result.problems[0]?.message).toContain('"DOWN"');
    expect(result.problems[0]?.message).toContain('CONNECTED, DISCONNECTED');
  });

  it.each(['NODE_IP_CHANGE', 'CERT_EXPIRY', 'HEADLESS_EXPIRY', 'NODE_UPGRADE'] as const)(
    'refuses alert_me for %s, which has no states',
    (type) => {
      expect(fieldsOf(type, { alert_me: 'ALIVE' })).toEqual(['settings.alert_me']);
      const result = normalizeSettings(type, { org_id: ORG });
      expect(result.ok && result.value.alertMe).toBeNull();
    },
  );

  it.each([
    ['NODE_STATE_CHANGE', { alert_me: 'ALIVE' }],
    ['TUNNEL_STATE_CHANGE', { alert_me: 'CONNECTED' }],
    ['SERVICE_STATE_CHANGE', { alert_me: 'HEALTHY' }],
    ['NODE_IP_CHANGE', {}],
  ] as const)('takes a duration for %s, 0 when omitted', (type, base) => {
    const given = normalizeSettings(type, { org_id: ORG, ...base, duration: MAX_DURATION_MINUTES });
    expect(given.ok && given.value.durationMinutes).toBe(MAX_DURATION_MINUTES);
    const omitted = normalizeSettings(type, { org_id: ORG, ...base });
    expect(omitted.ok && omitted.value.durationMinutes).toBe(0);
  });

  it.each(['CERT_EXPIRY', 'HEADLESS_EXPIRY', 'NODE_UPGRADE'] as const)(
    'refuses a duration for %s and stores none',
    (type) => {
      expect(fieldsOf(type, { duration: 0 })).toEqual(['settings.duration']);
      const result = normalizeSettings(type, { org_id: ORG });
      expect(result.ok && result.value.durationMinutes).toBeNull();
    },
  );

  it('reports every broken rule at once', () => {
    expect(fieldsOf('CERT_EXPIRY', { alert_me: 'ALIVE', duration: 1 })).toEqual([
      'settings.alert_me',
      'settings.duration',
    ]);
  });

  it.each([
    [undefined, true],
    [true, true],
    ['true', true],
    [false, false],
    ['false', false],
  ] as const)('reads include_child %j as %s', (includeChild, expected) => {
    const result = normalizeSettings('CERT_EXPIRY', {
      org_id: ORG,
      ...(includeChild === undefined ? {} : { include_child: includeChild }),
    });
    expect(result.ok && result.value.includeChild).toBe(expected);
  });
});
