import { useEffect, useState, type ReactNode } from 'react';
import { useRoute } from './router';
import { useSession } from './session';

const SECTIONS = [
  { path: '/fleet', label: 'Fleet' },
  { path: '/events', label: 'Events' },
  { path: '/incidents', label: 'Incidents' },
  { path: '/notifications', label: 'Notifications' },
  { path: '/alerts', label: 'Alerts' },
  { path: '/webhooks', label: 'Webhooks' },
  { path: '/channels', label: 'Channels' },
  { path: '/silences', label: 'Maintenance' },
  { path: '/keys', label: 'API keys' },
  { path: '/users', label: 'Users', admin: true },
];

/** Which section a route belongs to: a node's page is part of the fleet. */
function sectionOf(path: string): string {
  if (path.startsWith('/nodes')) return '/fleet';
  return `/${path.split('/')[1] ?? ''}`;
}

export function Layout({ children }: { children: ReactNode }) {
  const { me, isAdmin, signOut } = useSession();
  const route = useRoute();
  const active = sectionOf(route.path);
  // On a narrow screen the sections fold into a menu, closed again by every move to another page.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [route.path]);
  return (
    <div className="shell">
      <header className="topbar">
        <a className="brand" href="#/fleet">
          <span className="brand-mark" aria-hidden="true" />
          edgewatch
        </a>
        <button
          type="button"
          className="menu-toggle quiet"
          aria-expanded={menuOpen}
          aria-controls="sections"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
        <nav aria-label="Sections" id="sections" className={menuOpen ? 'sections open' : 'sections'}>
          {SECTIONS.filter((section) => !section.admin || isAdmin).map((section) => (
            <a
              key={section.path}
              href={`#${section.path}`}
              aria-current={active === section.path ? 'page' : undefined}
            >
              {section.label}
            </a>
          ))}
        </nav>
        <div className="who">
          <span title={me?.email}>{me?.name ?? ''}</span>
          <button type="button" className="quiet" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">{children}</main>
    </div>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="page-header">
      <h1>{title}</h1>
      {children === undefined ? null : <div className="actions">{children}</div>}
    </div>
  );
}
