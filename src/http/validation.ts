import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler';

const shared = { removeAdditional: false, useDefaults: true } as const;
const bodyCompilers = AjvCompiler();
const textCompilers = AjvCompiler();

/** What Fastify hands a validator compiler for each part of each route. */
interface RouteSchemaDefinition {
  schema: unknown;
  httpPart?: string;
}
type CompileRoutePart = (definition: RouteSchemaDefinition) => unknown;

/**
 * Bodies are JSON and are validated as sent: `"5"` is not the integer 5. Query strings and path
 * parameters can only carry text, so they are coerced to the declared type (`?size=100` is the integer
 * 100, `?size=ten` still fails). One validator per part, each with Fastify's own formats.
 */
export const validatorByPart = ((externalSchemas) => {
  const strict = bodyCompilers(externalSchemas, {
    customOptions: { ...shared, coerceTypes: false },
  }) as unknown as CompileRoutePart;
  const coercing = textCompilers(externalSchemas, {
    customOptions: { ...shared, coerceTypes: true },
  }) as unknown as CompileRoutePart;
  return (definition: RouteSchemaDefinition) =>
    definition.httpPart === 'body' ? strict(definition) : coercing(definition);
}) as BuildCompilerFromPool;
