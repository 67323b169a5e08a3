import { sql, type RawBuilder } from 'kysely';

/** A `like` pattern that finds `text` anywhere, any case; `%` and `_` match themselves, not any text. */
export function likePattern(text: string): RawBuilder<string> {
  const escaped = text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
  return sql<string>`${`%${escaped}%`} escape '\\'`;
}
