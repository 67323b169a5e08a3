import { Type, type TSchema } from 'typebox';
import { AppError } from './errors.js';
import { errorBody } from './error-handler.js';
import { ErrorBody } from './schemas.js';

/** How many ids one bulk call takes: a console selection, or a page-by-page "all matching". */
export const MAX_BULK_IDS = 1000;

export const BulkIds = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    minItems: 1,
    maxItems: MAX_BULK_IDS,
    uniqueItems: true,
    description: `${description} 1 to ${MAX_BULK_IDS}, each once.`,
  });

/**
 * The answer of a bulk call: one result per id, in the order sent, each with the status and body its own
 * call would have answered. The call itself answers 200 once it has tried every id.
 */
export const BulkAnswer = (item: TSchema) =>
  Type.Object({
    succeeded: Type.Integer({ description: 'How many results have a 2xx status.' }),
    failed: Type.Integer({ description: 'How many have an error status; each says why in its body.' }),
    results: Type.Array(
      Type.Object({
        id: Type.String(),
        status: Type.Integer({ description: 'The HTTP status this id alone would have answered.' }),
        body: Type.Union([item, ErrorBody]),
      }),
    ),
  });

export interface BulkResult<T> {
  id: string;
  status: number;
  body: T | ReturnType<typeof errorBody>;
}

/**
 * Runs `work` for each id in turn, each in its own transaction: one id's refusal (an AppError) is its
 * result and leaves the others alone. Anything else is a fault and fails the call.
 */
export async function forEachId<T>(
  ids: readonly string[],
  successStatus: number,
  work: (id: string) => Promise<T>,
) {
  const results: BulkResult<T>[] = [];
  for (const id of ids) {
    try {
      results.push({ id, status: successStatus, body: await work(id) });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      results.push({ id, status: error.statusCode, body: errorBody(error) });
    }
  }
  const succeeded = results.filter((result) => result.status < 300).length;
  return { succeeded, failed: results.length - succeeded, results };
}
