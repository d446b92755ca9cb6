// Starts `bench serve --sim` for the end-to-end tests and reads the URL it prints.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/** The bench binary: $BENCH_BIN, else release then debug under $CARGO_TARGET_DIR or target/. */
export function benchBin() {
  if (process.env.BENCH_BIN) return process.env.BENCH_BIN;
  const dirs = [process.env.CARGO_TARGET_DIR, path.join(repo, 'target')].filter(Boolean);
  for (const d of dirs) for (const p of ['release', 'debug']) {
    const f = path.join(d, p, 'bench');
    if (existsSync(f)) return f;
  }
  throw new Error('no bench binary: build it with `cargo build --release -p bench-daemon` or set BENCH_BIN');
}

export function tempDb() {
  return path.join(mkdtempSync(path.join(tmpdir(), 'fb-e2e-')), 'bench.db');
}

/**
 * Spawns `bench serve --sim --listen LISTEN --db DB --web web/dist` (`mode`: `['--lab']` for a
 * lab view) and resolves with `{url, proc, stop()}` once it printed its URL.
 */
export function startBench({ db, listen = '127.0.0.1:0', timeoutMs = 30000, mode = ['--sim'] } = {}) {
  const web = path.join(repo, 'web', 'dist');
  const args = ['serve', ...mode, '--listen', listen, '--db', db, '--web', web];
  return new Promise((resolve, reject) => {
    const proc = spawn(benchBin(), args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? 'warn' } });
    let out = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`bench serve printed no URL within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (buf) => {
      out += buf.toString();
      const m = out.match(/https?:\/\/(?:127\.0\.0\.1|localhost|\[::1\]):\d+/);
      if (m) {
        clearTimeout(timer);
        proc.stdout.off('data', onData);
        proc.stderr.off('data', onData);
        // Keep draining so the daemon never blocks on a full pipe.
        proc.stdout.on('data', () => {});
        proc.stderr.on('data', (b) => { if (process.env.E2E_VERBOSE) process.stderr.write(b); });
        resolve({
          url: m[0],
          proc,
          output: () => out,
          stop: () =>
            new Promise((res) => {
              if (proc.exitCode !== null) return res();
              proc.once('exit', () => res());
              proc.kill('SIGTERM');
              setTimeout(() => proc.kill('SIGKILL'), 10000).unref();
            }),
        });
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`bench serve exited with ${code} before printing its URL:\n${out}`));
    });
  });
}
