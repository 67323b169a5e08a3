import { badRequest } from './errors.js';

/**
 * A field that the product's published client sends under another name (docs/rules/api.md#aliases): either
 * name is accepted with the same rules, and giving both at once is refused rather than guessed between.
 */
export function eitherName<
  Body extends object,
  Name extends keyof Body & string,
  Alias extends keyof Body & string,
>(body: Body, name: Name, alias: Alias): Body[Name] | Body[Alias] | undefined {
  const value = body[name];
  const aliasValue = body[alias];
  if (value !== undefined && aliasValue !== undefined) {
    throw badRequest(`Give either ${name} or ${alias}, not both: they are the same field.`, [
      { field: alias, message: `is another name for ${name}; send only one of them` },
    ]);
  }
  return value ?? aliasValue;
}

/** The OpenAPI description of an alias field. */
export const aliasDescription = (name: string) =>
  `Another name for ${name}, as the product's published client sends it; the same rules apply. Not both.`;

/** The body with the alias folded into the field's own name, so services see one name only. */
export function foldAlias<
  Body extends object,
  Name extends keyof Body & string,
  Alias extends keyof Body & string,
>(body: Body, name: Name, alias: Alias): Omit<Body, Alias> {
  const value = eitherName(body, name, alias);
  const folded = { ...body } as Record<string, unknown>;
  delete folded[alias];
  if (value !== undefined) folded[name] = value;
  return folded as Omit<Body, Alias>;
}
