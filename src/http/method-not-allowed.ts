import type { RouteOptions } from 'fastify';

/**
 * Knows every registered path and its methods, so an unknown method on a known path can be
 * answered 405 with an Allow header instead of a bare 404.
 */
export class RouteTable {
  private readonly routes: { pattern: RegExp; methods: Set<string> }[] = [];

  add(route: RouteOptions): void {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const source = route.url
      .replace(/\/+$/, '')
      .split('/')
      .map((part) =>
        part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('/');
    const pattern = new RegExp(`^${source}/?$`);
    const existing = this.routes.find((entry) => entry.pattern.source === pattern.source);
    if (existing === undefined) this.routes.push({ pattern, methods: new Set(methods) });
    else for (const method of methods) existing.methods.add(method);
  }

  /** The methods a path answers to, or undefined when no route has that path. */
  allowed(url: string): string[] | undefined {
    const path = url.split('?')[0] ?? url;
    const methods = new Set<string>();
    for (const route of this.routes)
      if (route.pattern.test(path)) for (const m of route.methods) methods.add(m);
    return methods.size === 0 ? undefined : [...methods].sort();
  }
}
