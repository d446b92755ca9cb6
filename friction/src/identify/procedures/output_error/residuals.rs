//! The output-error residuals and their forward-difference Jacobian on all cores.

use super::super::replay::replay_segment;
use super::OutputError;
use crate::identify::{FitError, Residuals};
use nalgebra::DMatrix;
use std::sync::atomic::Ordering;

impl Residuals for OutputError<'_> {
    fn len(&self) -> usize {
        self.len
    }

    fn residuals(&self, q: &[f64], out: &mut [f64]) -> Result<(), FitError> {
        if self.evals.fetch_add(1, Ordering::Relaxed) + 1 >= self.cap {
            self.exhausted.store(true, Ordering::Relaxed);
        }
        let Some((mut model, setup)) = self.model_at(q) else {
            out.fill(f64::INFINITY);
            return Ok(());
        };
        let mut o = 0;
        for (i, s) in self.segs.iter().enumerate() {
            let n = s.len() - self.skip[i];
            replay_segment(model.as_mut(), s, &setup, self.skip[i], &mut out[o..o + n]);
            o += n;
        }
        Ok(())
    }

    /// Forward differences (one replay per parameter, on all cores), in scaled coordinates with
    /// step `diff_step` (backward at an upper bound or where the forward point is refused).
    fn jacobian(&self, q: &[f64], jac: &mut DMatrix<f64>) -> Option<Result<(), FitError>> {
        let (m, n) = (self.len, q.len());
        let mut r0 = vec![0.0; m];
        if let Err(e) = self.residuals(q, &mut r0) {
            return Some(Err(e));
        }
        if r0.iter().any(|x| !x.is_finite()) {
            return Some(Err(FitError::Eval(
                "the Jacobian was asked at a point the model refuses".into(),
            )));
        }
        jac.resize_mut(m, n, 0.0);
        let b = self.bounds();
        let column = |j: usize, col: &mut [f64]| -> Result<(), FitError> {
            let h = self.diff_step;
            let mut x = q.to_vec();
            let mut r = vec![0.0; m];
            for step in [h, -h] {
                x[j] = q[j] + step;
                if x[j] > b.upper[j] || x[j] < b.lower[j] {
                    continue;
                }
                self.residuals(&x, &mut r)?;
                if r.iter().all(|v| v.is_finite()) {
                    for i in 0..m {
                        col[i] = (r[i] - r0[i]) / step;
                    }
                    return Ok(());
                }
            }
            col.fill(0.0);
            Ok(())
        };
        let threads = self.threads.clamp(1, n.max(1));
        let data = jac.as_mut_slice();
        let result = std::thread::scope(|sc| {
            let mut cols: Vec<(usize, &mut [f64])> = data.chunks_mut(m).enumerate().collect();
            let per = n.div_ceil(threads);
            let mut handles = Vec::new();
            while !cols.is_empty() {
                let rest = cols.split_off(per.min(cols.len()));
                let mine = std::mem::replace(&mut cols, rest);
                let column = &column;
                handles.push(sc.spawn(move || {
                    for (j, col) in mine {
                        column(j, col)?;
                    }
                    Ok::<(), FitError>(())
                }));
            }
            handles.into_iter().try_for_each(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(FitError::Bug("a Jacobian thread panicked".into())))
            })
        });
        Some(result)
    }
}
