//! The queue's persisted order: each waiting run has a sort key, strictly increasing along the
//! queue, spaced so that runs can be put between two neighbours without rewriting the rest.

/// Spacing of the sort keys when the queue is numbered afresh: room for a million runs to be
/// put between two neighbours before the queue has to be rewritten.
pub const KEY_GAP: i64 = 1 << 20;

/// Sort keys for `count` runs put between the keys `before` and `after` (`None`: the queue's
/// end), or `None` when there is no room and the queue must be numbered afresh.
pub fn keys_between(before: Option<i64>, after: Option<i64>, count: usize) -> Option<Vec<i64>> {
    let n = i64::try_from(count).ok()?;
    match (before, after) {
        (None, None) => Some((0..n).map(|k| k * KEY_GAP).collect()),
        (Some(a), None) => (1..=n)
            .map(|k| a.checked_add(k.checked_mul(KEY_GAP)?))
            .collect(),
        (None, Some(b)) => (0..n)
            .map(|k| b.checked_sub((n - k).checked_mul(KEY_GAP)?))
            .collect(),
        (Some(a), Some(b)) => {
            let room = i128::from(b) - i128::from(a);
            (room > i128::from(n)).then(|| {
                (1..=n)
                    .map(|k| (i128::from(a) + room * i128::from(k) / i128::from(n + 1)) as i64)
                    .collect()
            })
        }
    }
}

/// Keys for a queue of `count` runs numbered afresh.
pub fn fresh_keys(count: usize) -> impl Iterator<Item = i64> {
    (0..count as i64).map(|k| k * KEY_GAP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_go_between_their_neighbours_or_ask_for_a_renumbering() {
        assert_eq!(
            keys_between(None, None, 3),
            Some(vec![0, KEY_GAP, 2 * KEY_GAP])
        );
        assert_eq!(
            keys_between(Some(5), None, 2),
            Some(vec![5 + KEY_GAP, 5 + 2 * KEY_GAP])
        );
        assert_eq!(
            keys_between(None, Some(0), 2),
            Some(vec![-2 * KEY_GAP, -KEY_GAP])
        );
        assert_eq!(keys_between(Some(0), Some(10), 4), Some(vec![2, 4, 6, 8]));
        assert_eq!(keys_between(Some(0), Some(4), 4), None, "no room: renumber");
        assert_eq!(
            keys_between(Some(i64::MAX - 1), None, 1),
            None,
            "overflow: renumber"
        );
        assert_eq!(fresh_keys(3).collect::<Vec<_>>(), [0, KEY_GAP, 2 * KEY_GAP]);
    }
}
