import { useSyncExternalStore } from 'react';

/**
 * Routes live in the URL's fragment (`#/nodes/<id>?page=2`): every console URL can be bookmarked and
 * reloaded, and the service needs no fallback route for them.
 */
export interface Route {
  path: string;
  segments: string[];
  params: URLSearchParams;
}

function current(): string {
  return window.location.hash.replace(/^#/, '') || '/fleet';
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

export function useRoute(): Route {
  const location = useSyncExternalStore(subscribe, current);
  const [path = '/fleet', search = ''] = location.split('?');
  return { path, segments: path.split('/').filter(Boolean), params: new URLSearchParams(search) };
}

export function href(path: string, params: Record<string, string | number | undefined> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return `#${path}${text === '' ? '' : `?${text}`}`;
}

export function navigate(path: string, params: Record<string, string | number | undefined> = {}): void {
  window.location.hash = href(path, params);
}

/** Replaces the current URL's parameters (filters, page) without adding a history entry per keystroke. */
export function replaceParams(route: Route, changes: Record<string, string | number | undefined>): void {
  const next: Record<string, string> = Object.fromEntries(route.params.entries());
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined || value === '') delete next[name];
    else next[name] = String(value);
  }
  window.history.replaceState(null, '', href(route.path, next));
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}
