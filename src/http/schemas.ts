import { Type, type TSchema } from 'typebox';

export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer({ description: 'HTTP status code, repeated.' }),
    errorCode: Type.String({ description: 'HTTP reason in upper snake case, e.g. NOT_FOUND.' }),
    message: Type.String({ description: 'What went wrong, in a sentence a person can act on.' }),
    details: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
        description: 'One entry per invalid field, when the request body or query was invalid.',
      }),
    ),
  },
  { title: 'Error', description: 'The shape of every error answer.' },
);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is malformed: a missing, extra or mistyped field.',
  401: 'No X-API-KEY header, or the key is unknown or revoked.',
  403: "The key's roles do not allow this operation.",
  404: 'The resource does not exist or is not visible to the caller.',
  409: 'The request conflicts with the current state.',
  413: 'The body is larger than 64 KiB.',
  415: 'The body is not application/json.',
  422: 'A business rule refused the request.',
  429: 'Too many requests; retry after the number of seconds in Retry-After.',
};

/** Response map for a route: its success schemas plus the error answers it can give. */
export function responses<S extends Record<number, TSchema>>(success: S, errors: number[] = []): S {
  const map: Record<number, TSchema> = { ...success };
  for (const status of errors) {
    map[status] = { ...ErrorBody, description: ERROR_DESCRIPTIONS[status] ?? 'Error.' };
  }
  return map as S;
}

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const SuccessMessage = Type.Object({
  id: Type.String(),
  message: Type.String(),
  status: Type.Literal('SUCCESS'),
});

/** `?force=true` on a removal that would take alerts with it (a webhook they use, a resource they watch). */
export const forceQuery = (description: string) =>
  Type.Object(
    { force: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description })) },
    { additionalProperties: false },
  );

export const DeleteWithAlertsAnswer = Type.Object({
  id: Type.String(),
  message: Type.String(),
  status: Type.Literal('SUCCESS'),
  removed_alert_ids: Type.Optional(Type.Array(Type.String(), { description: 'Only with force=true.' })),
});
