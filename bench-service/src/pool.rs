//! The bounded blocking pool for heavy request work (plan checks, sweep expansion): a few
//! `spawn_blocking` jobs at a time behind a semaphore, so the async worker threads that answer
//! `/api/health`, `/api/estop` and `/api/bench` and the scheduler task are never the ones
//! planning a 10 000-segment sweep. A request that finds no worker free within a short wait is
//! told so (503) rather than queued without bound.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Heavy jobs at a time (the bench PC has few cores and one of them runs the 1 kHz loop).
pub const WORKERS: usize = 2;

/// How long a request waits for a free worker before 503.
pub const WAIT: Duration = Duration::from_millis(500);

/// The pool (cheap to clone).
#[derive(Clone, Debug)]
pub struct Pool {
    permits: Arc<Semaphore>,
    workers: usize,
    wait: Duration,
}

impl Default for Pool {
    fn default() -> Pool {
        Pool::new(WORKERS, WAIT)
    }
}

impl Pool {
    /// `workers` jobs at a time; requests wait at most `wait` for one.
    pub fn new(workers: usize, wait: Duration) -> Pool {
        Pool {
            permits: Arc::new(Semaphore::new(workers)),
            workers,
            wait,
        }
    }

    /// Jobs running now.
    pub fn busy(&self) -> usize {
        self.workers - self.permits.available_permits()
    }

    /// Runs `job` on a blocking thread for a request: 503 if no worker frees within the wait.
    pub async fn run<T: Send + 'static, E: From<PoolError> + Send + 'static>(
        &self,
        job: impl FnOnce() -> Result<T, E> + Send + 'static,
    ) -> Result<T, E> {
        let permit = tokio::time::timeout(self.wait, self.permits.clone().acquire_owned())
            .await
            .map_err(|_| busy(self.wait))?
            .map_err(|_| busy(self.wait))?;
        finish(tokio::task::spawn_blocking(move || {
            let _permit = permit;
            job()
        }))
        .await
    }

    /// Runs `job` on a blocking thread for the scheduler, waiting for a worker however long.
    pub async fn run_waiting<T: Send + 'static, E: From<PoolError> + Send + 'static>(
        &self,
        job: impl FnOnce() -> Result<T, E> + Send + 'static,
    ) -> Result<T, E> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| busy(self.wait))?;
        finish(tokio::task::spawn_blocking(move || {
            let _permit = permit;
            job()
        }))
        .await
    }
}

/// Why the pool did not run a job to its end.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// No worker free within the wait.
    #[error("{0}")]
    Busy(String),
    /// The job panicked or was cancelled.
    #[error("{0}")]
    Aborted(String),
}

async fn finish<T, E: From<PoolError>>(
    handle: tokio::task::JoinHandle<Result<T, E>>,
) -> Result<T, E> {
    handle
        .await
        .map_err(|e| PoolError::Aborted(format!("the check ended abnormally: {e}")))?
}

fn busy(wait: Duration) -> PoolError {
    PoolError::Busy(format!(
        "the server is busy checking other plans ({WORKERS} at a time, none free within {} \
         ms): try again shortly",
        wait.as_millis()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_pool_answers_503_and_frees_when_the_job_ends() {
        let pool = Pool::new(1, Duration::from_millis(20));
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (started_tx, started) = tokio::sync::oneshot::channel();
        let held = {
            let pool = pool.clone();
            tokio::spawn(async move {
                pool.run::<i32, PoolError>(move || {
                    let _ = started_tx.send(());
                    let _ = rx.recv();
                    Ok(1)
                })
                .await
            })
        };
        started.await.unwrap();
        let e = pool.run::<i32, PoolError>(|| Ok(2)).await.unwrap_err();
        assert!(matches!(e, PoolError::Busy(_)), "{e:?}");
        tx.send(()).unwrap();
        assert_eq!(held.await.unwrap().unwrap(), 1);
        assert_eq!(pool.run::<i32, PoolError>(|| Ok(3)).await.unwrap(), 3);
    }
}
