/** Digits of a run's length: a name holds at most 128 characters, so no run comes near 999 digits. */
const LENGTH_DIGITS = 3;

/**
 * The key that puts node names in natural order when compared byte by byte (`nodes.name_sort`): node-2
 * before node-10 before node-100, whatever the case. Each run of digits becomes its length without leading
 * zeros, in LENGTH_DIGITS digits, then those digits: a shorter number sorts first, numbers of one length
 * compare digit by digit, and no run is too long to compare right (unlike padding to a fixed width).
 * Numbers that differ only in leading zeros (7, 007) get the same key; the list's tiebreaker orders them.
 * Pure: set wherever a name is written.
 */
export function naturalSortKey(name: string): string {
  return name.toLowerCase().replace(/[0-9]+/g, (run) => {
    const digits = run.replace(/^0+/, '');
    return String(digits.length).padStart(LENGTH_DIGITS, '0') + digits;
  });
}
