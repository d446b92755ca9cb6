//! The signals that end a command which can move a drive.

use std::future::Future;

/// Installs the handlers for SIGINT, SIGTERM and SIGHUP (the ways a terminal, systemd or a
/// closed SSH session end a process) now, and returns the wait for the first of them, named:
/// every command that can move a drive aborts its run into the safe state on any of them.
/// Installed by the call, not by the first poll: a signal between a spawn and its task's
/// first poll would otherwise meet the default action, which ends the process on the spot
/// (seen as a `bench serve` that printed its URL and died silently on SIGTERM). Call it
/// within the runtime.
pub fn stop_signal() -> impl Future<Output = &'static str> + Send + 'static {
    use tokio::signal::unix::{SignalKind, signal};
    let streams = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    );
    async move {
        let (Ok(mut int), Ok(mut term), Ok(mut hup)) = streams else {
            let _ = tokio::signal::ctrl_c().await;
            return "SIGINT";
        };
        tokio::select! {
            _ = int.recv() => "SIGINT",
            _ = term.recv() => "SIGTERM",
            _ = hup.recv() => "SIGHUP",
        }
    }
}
