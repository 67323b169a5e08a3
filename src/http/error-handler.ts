import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorDetail } from './errors.js';

const INTERNAL_MESSAGE =
  'Something went wrong on our side. It has been logged; quote the X-Request-Id header when reporting it.';

// Framework errors that have a contract status, with a message a client can act on.
const FRAMEWORK_ERRORS: Record<string, [number, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [
    415,
    'The body must be JSON: send it with Content-Type: application/json.',
  ],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'The body is larger than the 64 KiB limit.'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'The body is not valid JSON.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'The body is empty; send a JSON object.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'The Content-Length header does not match the body.'],
};

interface ValidationIssue {
  keyword?: string;
  instancePath?: string;
  schemaPath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function fieldOf(issue: ValidationIssue): string {
  const path = (issue.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const extra = issue.params?.additionalProperty ?? issue.params?.missingProperty;
  if (typeof extra === 'string') return path === '' ? extra : `${path}.${extra}`;
  return path;
}

/** The values or types one failed branch of a choice accepts, or undefined for a branch too complex to list. */
function acceptedBy(issue: ValidationIssue): string[] | undefined {
  if (issue.keyword === 'choice') return undefined;
  if (issue.keyword === 'const') return [JSON.stringify(issue.params?.allowedValue)];
  if (issue.keyword === 'enum' && Array.isArray(issue.params?.allowedValues)) {
    return issue.params.allowedValues.map((value) => JSON.stringify(value));
  }
  if (issue.keyword === 'type' && typeof issue.params?.type === 'string') return [`a ${issue.params.type}`];
  return undefined;
}

function oneOf(accepted: string[]): string {
  return accepted.length === 1 ? `must be ${accepted[0]}` : `must be one of: ${accepted.join(', ')}`;
}

function messageOf(issue: ValidationIssue): string {
  if (typeof issue.params?.additionalProperty === 'string') return 'is not a known field';
  if (typeof issue.params?.missingProperty === 'string') return 'is required';
  if (issue.keyword === 'anyOf') return 'matches none of the accepted forms';
  const accepted = issue.keyword === 'type' ? undefined : acceptedBy(issue);
  if (accepted !== undefined) return oneOf(accepted);
  return issue.message ?? 'is invalid';
}

/**
 * The validator reports a failed choice (a union, such as an enum of literals) as one issue per
 * branch plus one for the choice. When every branch is a plain value or type, they become a single
 * issue that lists what is accepted, so a client reads "must be one of: …" once instead of N times
 * "must be equal to constant".
 */
function collapseChoices(issues: ValidationIssue[]): ValidationIssue[] {
  const collapsed: ValidationIssue[] = [];
  let pending: ValidationIssue[] = [];
  for (const issue of issues) {
    if (issue.keyword !== 'anyOf') {
      pending.push(issue);
      continue;
    }
    const prefix = `${issue.schemaPath ?? ''}/`;
    const branches = pending.filter(
      (candidate) =>
        candidate.instancePath === issue.instancePath && (candidate.schemaPath ?? '').startsWith(prefix),
    );
    const accepted = branches.flatMap((branch) => acceptedBy(branch) ?? []);
    const listable = branches.length > 0 && branches.every((branch) => acceptedBy(branch) !== undefined);
    if (listable) {
      const others = pending.filter((candidate) => !branches.includes(candidate));
      collapsed.push(...others, { ...issue, keyword: 'choice', message: oneOf(accepted) });
    } else {
      collapsed.push(...pending, issue);
    }
    pending = [];
  }
  return [...collapsed, ...pending];
}

function fromValidation(error: FastifyError): AppError {
  const where =
    error.validationContext === 'querystring' ? 'query string' : (error.validationContext ?? 'request');
  const issues = collapseChoices(error.validation ?? []);
  const details: ErrorDetail[] = issues.map((issue) => ({
    field: fieldOf(issue),
    message: issue.keyword === 'choice' ? (issue.message ?? 'is invalid') : messageOf(issue),
  }));
  const first = details[0];
  const summary =
    first === undefined
      ? 'is invalid'
      : `${first.field === '' ? where : `"${first.field}"`} ${first.message}`;
  return new AppError(400, `Invalid ${where}: ${summary}.`, details);
}

/** Turns anything thrown into the one error type; unknown errors become a generic 500. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as Partial<FastifyError>;
  if (fastifyError.validation !== undefined) return fromValidation(error as FastifyError);
  const known = fastifyError.code === undefined ? undefined : FRAMEWORK_ERRORS[fastifyError.code];
  if (known !== undefined) return new AppError(known[0], known[1]);
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AppError(status, fastifyError.message ?? 'The request was refused.');
  }
  return new AppError(500, INTERNAL_MESSAGE);
}

/** The contract's error shape: the body of an error answer, and of one failed id of a bulk call. */
export function errorBody(error: AppError) {
  return {
    statusCode: error.statusCode,
    errorCode: error.errorCode,
    message: error.message,
    ...(error.details === undefined ? {} : { details: error.details }),
  };
}

export function renderError(error: AppError, reply: FastifyReply): FastifyReply {
  if (error.headers !== undefined) void reply.headers(error.headers);
  // A string payload is sent as typed: the framework would append a charset to an object's JSON type.
  return reply
    .code(error.statusCode)
    .type('application/json')
    .send(JSON.stringify(errorBody(error)));
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const appError = toAppError(error);
  if (appError.statusCode >= 500) request.log.error({ err: error }, 'request failed');
  else request.log.info({ statusCode: appError.statusCode, errorCode: appError.errorCode }, appError.message);
  return renderError(appError, reply);
}
