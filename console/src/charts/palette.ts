import { useEffect, useState } from 'react';

/** The theme's colours, read from its CSS variables: a canvas cannot use them by name. */
export interface Palette {
  ink: string;
  inkSoft: string;
  line: string;
  good: string;
  bad: string;
  warn: string;
  info: string;
  quiet: string;
  accent: string;
}

const VARIABLES: Record<keyof Palette, string> = {
  ink: '--ink',
  inkSoft: '--ink-soft',
  line: '--line',
  good: '--good',
  bad: '--bad',
  warn: '--warn',
  info: '--info',
  quiet: '--quiet',
  accent: '--accent',
};

function read(): Palette {
  const style = getComputedStyle(document.documentElement);
  const entries = Object.entries(VARIABLES).map(([name, variable]) => [
    name,
    style.getPropertyValue(variable).trim(),
  ]);
  return Object.fromEntries(entries) as Palette;
}

/** The palette now, read again when the system switches between light and dark. */
export function usePalette(): Palette {
  const [palette, setPalette] = useState(read);
  useEffect(() => {
    const scheme = matchMedia('(prefers-color-scheme: dark)');
    const reread = () => setPalette(read());
    scheme.addEventListener('change', reread);
    return () => scheme.removeEventListener('change', reread);
  }, []);
  return palette;
}
