/** Processes as /proc shows them: CPU used, command lines, the private nats-server of a port. */
import fs from 'node:fs';

export function readStat(pid: number): { comm: string; cpuMs: number } | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 };
  } catch {
    return null;
  }
}

export function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

export function allPids(): number[] {
  return fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
}

export function natsServerPid(port: number): number | null {
  for (const pid of allPids()) {
    if (readStat(pid)?.comm !== 'nats-server') continue;
    if (cmdline(pid).includes(` -p ${port} `) || cmdline(pid).endsWith(` -p ${port}`)) return pid;
  }
  return null;
}
