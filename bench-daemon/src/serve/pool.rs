//! The bounded blocking pool for heavy request work (plan checks, sweep expansion): a few
//! `spawn_blocking` jobs at a time behind a semaphore, so the async worker threads that answer
//! `/api/health`, `/api/estop` and `/api/bench` and the scheduler task are never the ones
//! planning a 10 000-segment sweep. A request that finds no worker free within a short wait is
//! told so (503) rather than queued without bound.

use super::api::ApiError;
use axum::http::StatusCode;
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
    pub async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
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
    pub async fn run_waiting<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
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

async fn finish<T>(handle: tokio::task::JoinHandle<Result<T, ApiError>>) -> Result<T, ApiError> {
    handle.await.map_err(|e| ApiError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        error: format!("the check ended abnormally: {e}"),
        field: None,
    })?
}

fn busy(wait: Duration) -> ApiError {
    ApiError {
        status: StatusCode::SERVICE_UNAVAILABLE,
        error: format!(
            "the server is busy checking other plans ({WORKERS} at a time, none free within {} \
             ms): try again shortly",
            wait.as_millis()
        ),
        field: None,
    }
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
                pool.run(move || {
                    let _ = started_tx.send(());
                    let _ = rx.recv();
                    Ok(1)
                })
                .await
            })
        };
        started.await.unwrap();
        let e = pool.run(|| Ok(2)).await.unwrap_err();
        assert_eq!(e.status, StatusCode::SERVICE_UNAVAILABLE);
        tx.send(()).unwrap();
        assert_eq!(held.await.unwrap().unwrap(), 1);
        assert_eq!(pool.run(|| Ok(3)).await.unwrap(), 3);
    }
}
