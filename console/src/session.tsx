import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { api, onSignedOut, storedKey } from './api/client';
import type { Me } from './api/types';

interface Session {
  key: string | null;
  me: Me | undefined;
  isAdmin: boolean;
  canWrite: boolean;
  signIn: (key: string) => void;
  signOut: () => void;
}

const SessionContext = createContext<Session | undefined>(undefined);

/**
 * The API key lives in sessionStorage only: it is gone when the tab closes or on sign-out, and any 401
 * (a revoked or expired key) returns to sign-in.
 */
export function SessionProvider({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  const [key, setKey] = useState(storedKey.get);
  const signOut = useCallback(() => {
    storedKey.clear();
    client.clear();
    setKey(null);
  }, [client]);
  useEffect(() => onSignedOut(signOut), [signOut]);
  const me = useQuery({
    queryKey: ['me', key],
    queryFn: () => api<Me>('GET', '/api/v1/user/me'),
    enabled: key !== null,
    staleTime: 60_000,
  });
  const roles = me.data?.roles.map((role) => role.id) ?? [];
  const session: Session = {
    key,
    me: me.data,
    isAdmin: roles.includes('admin'),
    canWrite: roles.includes('admin') || roles.includes('operator'),
    signIn: (next) => {
      storedKey.set(next);
      setKey(next);
    },
    signOut,
  };
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (session === undefined) throw new Error('useSession outside SessionProvider');
  return session;
}
