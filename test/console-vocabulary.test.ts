import { describe, expect, it } from 'vitest';
import { ALERT_TYPES } from '../console/src/api/vocabulary.js';
import { TYPE_INFO, type NotificationType } from '../src/features/notifications/types.js';

// The console offers these choices before the API judges them: a drift would only show up as 400s.
const consoleTypes: Record<string, { conditions: readonly string[]; duration: boolean }> = ALERT_TYPES;
const serviceTypes = Object.keys(TYPE_INFO) as NotificationType[];

describe("the console's alert vocabulary", () => {
  it('lists exactly the notification types of the service', () => {
    expect(Object.keys(consoleTypes).sort()).toEqual([...serviceTypes].sort());
  });

  it.each(serviceTypes)('%s has the conditions and the duration rule of the service', (type) => {
    expect(consoleTypes[type]?.conditions).toEqual(TYPE_INFO[type].conditions);
    expect(consoleTypes[type]?.duration).toBe(TYPE_INFO[type].takesDuration);
  });
});
