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
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function fieldOf(issue: ValidationIssue): string {
  const path = (issue.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const extra = issue.params?.additionalProperty ?? issue.params?.missingProperty;
  if (typeof extra === 'string') return path === '' ? extra : `${path}.${extra}`;
  return path;
}

function messageOf(issue: ValidationIssue): string {
  if (typeof issue.params?.additionalProperty === 'string') return 'is not a known field';
  if (typeof issue.params?.missingProperty === 'string') return 'is required';
  return issue.message ?? 'is invalid';
}

function fromValidation(error: FastifyError): AppError {
  const where =
    error.validationContext === 'querystring' ? 'query string' : (error.validationContext ?? 'request');
  const details: ErrorDetail[] = (error.validation ?? []).map((issue) => ({
    field: fieldOf(issue as ValidationIssue),
    message: messageOf(issue as ValidationIssue),
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

export function renderError(error: AppError, reply: FastifyReply): FastifyReply {
  if (error.headers !== undefined) void reply.headers(error.headers);
  const body = {
    statusCode: error.statusCode,
    errorCode: error.errorCode,
    message: error.message,
    ...(error.details === undefined ? {} : { details: error.details }),
  };
  return reply.code(error.statusCode).type('application/json; charset=utf-8').send(body);
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const appError = toAppError(error);
  if (appError.statusCode >= 500) request.log.error({ err: error }, 'request failed');
  else request.log.info({ statusCode: appError.statusCode, errorCode: appError.errorCode }, appError.message);
  return renderError(appError, reply);
}
