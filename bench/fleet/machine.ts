import fs from 'node:fs';
import os from 'node:os';

export interface MachineCpu {
  busyTicks: number;
  totalTicks: number;
}

/** The machine's CPU counters from /proc/stat (Linux); undefined elsewhere. */
export function machineCpu(): MachineCpu | undefined {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const [, ...fields] = line.trim().split(/\s+/);
    // user nice system idle iowait irq softirq steal (guest time is already inside user).
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.slice(0, 8).map(Number);
    const busy = [user, nice, system, irq, softirq, steal].reduce<number>((sum, n) => sum + (n ?? 0), 0);
    const total = busy + (idle ?? 0) + (iowait ?? 0);
    return Number.isFinite(total) && total > 0 ? { busyTicks: busy, totalTicks: total } : undefined;
  } catch {
    return undefined;
  }
}

/** Cores busy between two readings, whoever was busy. */
export function busyCores(before: MachineCpu | undefined, after: MachineCpu | undefined): number | undefined {
  if (before === undefined || after === undefined || after.totalTicks <= before.totalTicks) return undefined;
  const share = (after.busyTicks - before.busyTicks) / (after.totalTicks - before.totalTicks);
  return share * os.availableParallelism();
}
