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

#[cfg(test)]
mod tests {
    /// A signal sent after the call and before the wait is first polled is caught and named;
    /// with the handlers installed at the first poll, the default action would end this test's
    /// process instead.
    #[tokio::test]
    async fn a_signal_before_the_first_poll_is_caught() {
        let stop = super::stop_signal();
        let sent = std::process::Command::new("kill")
            .args(["-HUP", &std::process::id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        assert_eq!(stop.await, "SIGHUP");
    }
}
