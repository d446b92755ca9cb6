//! GMS state: the element forces and modes, cloned without reallocating.

use serde::{Deserialize, Serialize};

/// GMS state: the element forces, their modes and the direction of the last motion.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Element forces `F_i` \[N\].
    pub f: Vec<f64>,
    /// `true` where element `i` slips.
    pub slipping: Vec<bool>,
    /// `sgn` of the velocity over the last step (0 at rest), for the reversal test.
    pub dir: f64,
}

/// By hand: a derived `clone_from` clones whole, and the model wrapper copies the state every
/// step; this one reuses the elements' allocations.
impl Clone for State {
    fn clone(&self) -> State {
        State {
            f: self.f.clone(),
            slipping: self.slipping.clone(),
            dir: self.dir,
        }
    }

    fn clone_from(&mut self, src: &State) {
        self.f.clone_from(&src.f);
        self.slipping.clone_from(&src.slipping);
        self.dir = src.dir;
    }
}
