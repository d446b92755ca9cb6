//! A chain of runs read as one run: each plan segment from the run that measured it whole
//! (its samples contiguous, and the run went on to a later segment or completed), in segment
//! order, on one run-time axis.

use run_store::{RunStatus, SampleQuery, SampleSet, Store};
use std::collections::BTreeMap;
use std::ops::Range;

/// What a continuation carries besides its spec.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Continuation {
    /// The run it continues.
    pub of: i64,
    /// Plan segments measured whole by the chain so far: not run again.
    pub done: Vec<usize>,
}

/// The segments `set` holds whole, each with the range of its samples in `set`: a segment is
/// whole when its samples have no gap (no dropped batch, nothing lost to a kill) and the run
/// went on past it (a later segment has samples, or the run `completed`).
pub fn whole_segments(set: &SampleSet, completed: bool) -> BTreeMap<u32, Range<usize>> {
    let mut out = BTreeMap::new();
    let n = set.samples.len();
    let mut a = 0;
    while a < n {
        let seg = set.samples[a].segment;
        let b = (a..n).find(|&i| set.samples[i].segment != seg).unwrap_or(n);
        let contiguous = set.idx[b - 1] - set.idx[a] == (b - a - 1) as u64;
        if contiguous && (b < n || completed) {
            out.insert(seg, a..b);
        }
        a = b;
    }
    out
}

/// The samples of run `id` as the analyses and fits read them: for a run in a chain (resumed,
/// or a continuation), the chain's, each segment from the last run that measured it whole
/// (else from the last that measured part of it), shifted in time so that run time only
/// increases; `query` applies to that axis. A run never resumed reads as it is stored.
pub async fn chain_samples(
    store: &Store,
    id: i64,
    query: &SampleQuery,
) -> Result<SampleSet, run_store::Error> {
    let chain = store.chain(id).await?;
    if chain.len() == 1 {
        return store.samples(id, query).await;
    }
    let mut sets = Vec::with_capacity(chain.len());
    for run_id in &chain {
        let status = store.run(*run_id).await?.status;
        let set = store.samples(*run_id, &SampleQuery::default()).await?;
        let whole = whole_segments(&set, status == RunStatus::Completed);
        sets.push((set, whole));
    }
    Ok(select(&merge(&sets), query))
}

/// Each segment's samples from its source in `sets` (chain order), one time axis.
fn merge(sets: &[(SampleSet, BTreeMap<u32, Range<usize>>)]) -> SampleSet {
    let models = sets.first().map(|s| s.0.models.clone()).unwrap_or_default();
    let mut segments: Vec<u32> = sets
        .iter()
        .flat_map(|(set, _)| set.samples.iter().map(|s| s.segment))
        .collect();
    segments.sort_unstable();
    segments.dedup();
    let mut out = SampleSet {
        models: models.clone(),
        ..SampleSet::default()
    };
    // (source, offset): the run time shift of the source the last block came from.
    let mut current: Option<(usize, f64)> = None;
    for seg in segments {
        let Some((k, range)) = source_of(sets, seg) else {
            continue;
        };
        let set = &sets[k].0;
        let offset = match current {
            Some((src, off)) if src == k => off,
            _ => {
                let next = out.samples.last().map_or(0.0, |s| s.t + period(set));
                next - set.samples[range.start].t
            }
        };
        current = Some((k, offset));
        let columns: Vec<Option<usize>> = models
            .iter()
            .map(|m| set.models.iter().position(|x| x == m))
            .collect();
        for i in range {
            let mut s = set.samples[i];
            s.t += offset;
            out.idx.push(out.samples.len() as u64);
            out.samples.push(s);
            let row = set.outputs_at(i);
            out.outputs
                .extend(columns.iter().map(|c| c.map_or(f64::NAN, |c| row[c])));
        }
    }
    out
}

/// The run of the chain a segment's samples come from: the last that measured it whole (a
/// segment leading into one measured again is run again with it), else the last that
/// measured part of it.
fn source_of(
    sets: &[(SampleSet, BTreeMap<u32, Range<usize>>)],
    seg: u32,
) -> Option<(usize, Range<usize>)> {
    if let Some(found) = sets
        .iter()
        .enumerate()
        .rev()
        .find_map(|(k, (_, whole))| whole.get(&seg).map(|r| (k, r.clone())))
    {
        return Some(found);
    }
    sets.iter().enumerate().rev().find_map(|(k, (set, _))| {
        let a = set.samples.iter().position(|s| s.segment == seg)?;
        let b = set.samples.iter().rposition(|s| s.segment == seg)? + 1;
        Some((k, a..b))
    })
}

/// The sampling period of a set (its median step; 1 ms when it has too few samples).
fn period(set: &SampleSet) -> f64 {
    let mut dt: Vec<f64> = set.samples.windows(2).map(|w| w[1].t - w[0].t).collect();
    if dt.is_empty() {
        return 1e-3;
    }
    dt.sort_by(f64::total_cmp);
    dt[dt.len() / 2]
}

/// `query` (time range, decimation by index) applied to a merged set.
fn select(set: &SampleSet, query: &SampleQuery) -> SampleSet {
    let every = query.every.max(1);
    let m = set.models.len();
    let mut out = SampleSet {
        models: set.models.clone(),
        ..SampleSet::default()
    };
    for (i, s) in set.samples.iter().enumerate() {
        let kept = query.from_t.is_none_or(|a| s.t >= a)
            && query.to_t.is_none_or(|b| s.t <= b)
            && set.idx[i].is_multiple_of(every);
        if kept {
            out.idx.push(set.idx[i]);
            out.samples.push(*s);
            out.outputs
                .extend_from_slice(&set.outputs[i * m..(i + 1) * m]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(segments: &[(u32, u64)], gap_at: Option<usize>) -> SampleSet {
        let mut out = SampleSet {
            models: vec!["coulomb".into()],
            ..SampleSet::default()
        };
        let mut idx = 0;
        for &(seg, n) in segments {
            for _ in 0..n {
                if gap_at == Some(out.samples.len()) {
                    idx += 20;
                }
                out.samples.push(run_store::Sample {
                    t: idx as f64 * 1e-3,
                    x: 0.0,
                    v: f64::from(seg),
                    u_cmd: 0.0,
                    torque_motor: 0.0,
                    torque_sensor: 0.0,
                    segment: seg,
                    flags: 0,
                });
                out.idx.push(idx);
                out.outputs.push(f64::from(seg));
                idx += 1;
            }
        }
        out
    }

    #[test]
    fn the_last_segment_of_a_cut_run_and_a_segment_with_a_gap_are_not_whole() {
        let cut = set(&[(0, 5), (1, 5), (2, 3)], None);
        assert_eq!(
            whole_segments(&cut, false).into_iter().collect::<Vec<_>>(),
            vec![(0, 0..5), (1, 5..10)]
        );
        assert_eq!(whole_segments(&cut, true).len(), 3);
        // A dropped batch inside segment 1: measured again, never spliced.
        let gap = set(&[(0, 5), (1, 5), (2, 3)], Some(7));
        assert_eq!(
            whole_segments(&gap, false)
                .keys()
                .copied()
                .collect::<Vec<_>>(),
            vec![0]
        );
    }

    #[test]
    fn a_chain_gives_each_segment_once_from_the_run_that_measured_it_whole() {
        // Run 1 was cut in segment 2; run 2 measured 2 and 3 (skipping 0 and 1).
        let first = set(&[(0, 5), (1, 5), (2, 3)], None);
        let second = set(&[(2, 5), (3, 5)], None);
        let sets = vec![
            (first.clone(), whole_segments(&first, false)),
            (second.clone(), whole_segments(&second, true)),
        ];
        let merged = merge(&sets);
        let per_segment = |seg: u32| merged.samples.iter().filter(|s| s.segment == seg).count();
        assert_eq!(
            (0..4).map(per_segment).collect::<Vec<_>>(),
            vec![5, 5, 5, 5]
        );
        assert!(merged.samples.windows(2).all(|w| w[1].t > w[0].t));
        assert!(
            merged
                .samples
                .windows(2)
                .all(|w| w[1].segment >= w[0].segment)
        );
        assert_eq!(merged.outputs[12], 2.0);
        let later = select(
            &merged,
            &SampleQuery {
                from_t: Some(merged.samples[10].t),
                to_t: None,
                every: 5,
            },
        );
        assert_eq!(later.idx, vec![10, 15]);
    }
}
