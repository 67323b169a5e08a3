import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ApiError } from '../api/client';

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return error instanceof Error ? error.message : 'Something went wrong.';
}

export function ErrorNote({ error, title }: { error: unknown; title?: string }) {
  const forbidden = error instanceof ApiError && error.status === 403;
  return (
    <div className="note note-error" role="alert">
      <strong>{title ?? (forbidden ? 'Not allowed' : 'Could not load this')}</strong>
      <p>{errorText(error)}</p>
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

/** A query's loading and error states, and its data once there. */
export function Loaded<T>({
  query,
  what,
  children,
}: {
  query: UseQueryResult<T>;
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading what={what} />;
  if (query.isError) return <ErrorNote error={query.error} />;
  return <>{children(query.data)}</>;
}
