import { describe, expect, it } from 'vitest';
import { MAX_DURATION_MINUTES, normalizeSettings, type SettingsInput } from '../src/features/alerts/rules.js';
import { NOTIFICATION_TYPES, type NotificationType } from '../src/features/notifications/types.js';

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

  // The product's vocabulary (docs/rules/alerts-and-fleet.md#conditions), in the order answers list it.
  const VOCABULARY = {
    NODE_STATE_CHANGE: ['ALIVE', 'UNREACHABLE'],
    TUNNEL_STATE_CHANGE: ['CONNECTED', 'TERMINATED'],
    SERVICE_STATE_CHANGE: ['HEALTHY', 'UNHEALTHY', 'TERMINATED'],
    NODE_IP_CHANGE: ['PRIVATE_IP', 'PUBLIC_IP'],
    CERT_EXPIRY: ['80', '100'],
    HEADLESS_EXPIRY: ['80', '100'],
    NODE_UPGRADE: ['ENABLED', 'DISABLED', 'SUCCESSFUL', 'FAILED'],
  } as const;
  const EVERY_CONDITION = [...new Set(Object.values(VOCABULARY).flat())];

  it.each(Object.entries(VOCABULARY))('accepts the conditions of %s and nothing else', (name, conditions) => {
    const type = name as NotificationType;
    const all = conditions.join(',');
    const result = normalizeSettings(type, { org_id: ORG, alert_me: [...conditions].reverse().join(',') });
    expect(result.ok && result.value.alertMe).toBe(all);
    for (const condition of conditions) {
      const one = normalizeSettings(type, { org_id: ORG, alert_me: condition });
      expect(one.ok && one.value.alertMe).toBe(condition);
    }
    for (const other of EVERY_CONDITION.filter((c) => !(conditions as readonly string[]).includes(c))) {
      expect(fieldsOf(type, { alert_me: other })).toEqual(['settings.alert_me']);
    }
    expect(fieldsOf(type, { alert_me: 'DISCONNECTED' })).toEqual(['settings.alert_me']);
    expect(fieldsOf(type, { alert_me: '   ' })).toEqual(['settings.alert_me']);
    expect(fieldsOf(type, { alert_me: `${conditions[0]},,${conditions[1]}` })).toEqual(['settings.alert_me']);
  });

  it.each(Object.entries(VOCABULARY))(
    'watches every condition of %s when alert_me is left out',
    (name, conditions) => {
      const result = normalizeSettings(name as NotificationType, { org_id: ORG });
      expect(result.ok && result.value.alertMe).toBe(conditions.join(','));
    },
  );

  it('orders, trims and de-duplicates the conditions', () => {
    const result = normalizeSettings('NODE_STATE_CHANGE', {
      org_id: ORG,
      alert_me: ' UNREACHABLE,ALIVE , UNREACHABLE',
    });
    expect(result.ok && result.value.alertMe).toBe('ALIVE,UNREACHABLE');
  });

  it('names every unknown condition once, in one problem, with the valid ones', () => {
    const result = normalizeSettings('TUNNEL_STATE_CHANGE', {
      org_id: ORG,
      alert_me: 'UP,CONNECTED,DOWN,UP',
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]?.message).toBe(
      'has unknown condition(s) "UP", "DOWN"; TUNNEL_STATE_CHANGE knows CONNECTED, TERMINATED',
    );
  });

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
    'accepts a duration for %s and ignores it',
    (type) => {
      const given = normalizeSettings(type, { org_id: ORG, duration: 5 });
      expect(given.ok && given.value.durationMinutes).toBeNull();
      const omitted = normalizeSettings(type, { org_id: ORG });
      expect(omitted.ok && omitted.value.durationMinutes).toBeNull();
    },
  );

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
