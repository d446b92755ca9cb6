//! One controller per bench: a process that can move a bench holds an exclusive OS lock
//! (`flock`) per device endpoint for its whole life, so a second `bench run`, `bench serve` or
//! `bench perf loop` on the same drive or sensor exits at once, naming the holder, before it
//! sends a byte to the devices. The kernel drops the locks when the holder dies, however it
//! dies, so a stale lock file never blocks the bench.
//!
//! Lock files live in `$XDG_RUNTIME_DIR/frictionbench/` (else the system's temporary
//! directory), one per endpoint: `tcp-127.0.0.1-5020.lock`, `serial-dev-ttyUSB0.lock`. A
//! TCP host name is resolved first, so `localhost:502` and `127.0.0.1:502` are the same bench.

use crate::InputError;
use crate::config::Loaded;
use protocols::Endpoint;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::net::ToSocketAddrs;
use std::path::{Path, PathBuf};

/// The held locks of one bench; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct BenchLock {
    _files: Vec<File>,
}

/// The directory of the lock files.
pub fn lock_dir() -> PathBuf {
    std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join("frictionbench")
}

/// The lock file's name for an endpoint.
fn key(endpoint: &Endpoint) -> String {
    let raw = match endpoint {
        Endpoint::Tcp(addr) => {
            let resolved = addr
                .to_socket_addrs()
                .ok()
                .and_then(|mut a| a.next())
                .map_or_else(|| addr.clone(), |a| a.to_string());
            format!("tcp-{resolved}")
        }
        Endpoint::Serial { path, .. } => {
            let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            format!("serial-{}", real.display())
        }
    };
    let safe: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{}.lock", safe.trim_matches('-'))
}

impl BenchLock {
    /// Takes the locks of the bench's drive and sensor endpoints for `command` (written into
    /// the lock files so a second controller can name the holder).
    pub fn acquire(loaded: &Loaded, command: &str) -> Result<BenchLock, InputError> {
        let cfg = &loaded.config;
        let mut endpoints = vec![Loaded::link_config(&cfg.drive, &loaded.drive.0).endpoint];
        if let (Some(sc), Some((sp, _))) = (&cfg.sensor, &loaded.sensor)
            && (sc.tcp.is_some() || sc.serial.is_some())
        {
            endpoints.push(Loaded::link_config(sc, sp).endpoint);
        }
        let mut names: Vec<String> = endpoints.iter().map(key).collect();
        names.sort();
        names.dedup();
        let dir = lock_dir();
        std::fs::create_dir_all(&dir)
            .map_err(|e| InputError(format!("cannot create {}: {e}", dir.display())))?;
        let files = names
            .iter()
            .map(|name| lock_one(&dir.join(name), command))
            .collect::<Result<Vec<File>, InputError>>()?;
        Ok(BenchLock { _files: files })
    }
}

fn lock_one(path: &Path, command: &str) -> Result<File, InputError> {
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| {
            InputError(format!(
                "cannot open the bench lock {}: {e}",
                path.display()
            ))
        })?;
    match file.try_lock() {
        Ok(()) => {
            let holder = format!("pid {} ({command})\n", std::process::id());
            let written = file
                .set_len(0)
                .and_then(|()| file.rewind())
                .and_then(|()| file.write_all(holder.as_bytes()));
            written.map_err(|e| InputError(format!("{}: {e}", path.display())))?;
            Ok(file)
        }
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            Err(InputError(format!(
                "the bench is controlled by another process: {} holds {}; one controller per \
                 bench (nothing was sent to the devices)",
                holder.trim(),
                path.display()
            )))
        }
        Err(TryLockError::Error(e)) => Err(InputError(format!(
            "cannot lock the bench ({}): {e}",
            path.display()
        ))),
    }
}

/// The command line of this process, for the lock file.
pub fn this_command() -> String {
    let args: Vec<String> = std::env::args().collect();
    let mut text = args.join(" ");
    if let Some(name) = args.first().and_then(|a| Path::new(a).file_name()) {
        text = format!(
            "{}{}",
            name.to_string_lossy(),
            &text[args[0].len().min(text.len())..]
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_the_endpoint() {
        assert_eq!(
            key(&Endpoint::Tcp("127.0.0.1:5020".into())),
            "tcp-127.0.0.1-5020.lock"
        );
    }

    #[test]
    fn a_second_lock_on_the_same_file_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tcp-x.lock");
        let _held = lock_one(&path, "bench run a.json").unwrap();
        let err = lock_one(&path, "bench run b.json").unwrap_err().0;
        assert!(
            err.contains(&format!("pid {} (bench run a.json)", std::process::id())),
            "{err}"
        );
    }
}
