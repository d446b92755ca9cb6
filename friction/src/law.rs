//! How a model couples to a plant over one fixed step (docs/src/models/numerics.md#exact-and-implicit-state-updates (item 5), docs/src/models/numerics.md#drift-free-stick).
//!
//! A model describes its friction over step k as a function of the velocity at the end of the
//! step, `v_{k+1}`, with its nonlinear parts frozen at `v_k` and its stiff linear parts implicit.
//! The plant then solves `m (v_{k+1} - v_k)/h = u - F(v_{k+1})` exactly. This is what keeps stiff
//! bristle models stable at 10 ms and switched models free of drift during stick.

/// Friction over one step as a function of `v_{k+1}`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StepLaw {
    /// `F = offset + damping * v_{k+1}`, `damping >= 0`.
    Smooth {
        /// Friction at `v_{k+1} = 0` \[N\].
        offset: f64,
        /// Slope of the friction in `v_{k+1}` over this step \[N s/m\] (stiffness × h included).
        damping: f64,
    },
    /// Set-valued at rest (Kikuuwe et al. 2005, docs/src/models/numerics.md#drift-free-stick): the body stays at rest if the
    /// force needed to stop it lies in `[-limit_neg, limit_pos]`; otherwise it slides in
    /// direction `d` with `F = d * kinetic_d + damping * v_{k+1}`.
    Stick {
        /// Breakaway level for positive motion \[N\].
        limit_pos: f64,
        /// Breakaway level for negative motion \[N\] (a magnitude).
        limit_neg: f64,
        /// Kinetic level (magnitude) when sliding positively, frozen at `v_k` \[N\].
        kinetic_pos: f64,
        /// Kinetic level (magnitude) when sliding negatively, frozen at `v_k` \[N\].
        kinetic_neg: f64,
        /// Viscous slope while sliding \[N s/m\].
        damping: f64,
    },
}

/// The plant's side of one step: `u(v_{k+1}) = u0 - cu * v_{k+1}` (a spring pulled at one end
/// has `cu = k h`), mass `m` and velocity `v_k`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlantSide {
    /// Mass or inertia \[kg or kg m^2\].
    pub mass: f64,
    /// Velocity at the start of the step.
    pub v: f64,
    /// Applied force if the body ends the step at rest \[N\].
    pub u0: f64,
    /// Slope of the applied force in `v_{k+1}` (>= 0) \[N s/m\].
    pub cu: f64,
}

impl StepLaw {
    /// The friction when the velocity `v` is prescribed (measured or imposed) and `u` applied.
    ///
    /// For a set-valued law at `v = 0` the friction balances the applied force up to the limit.
    #[inline]
    pub fn force_at(&self, v: f64, u: f64) -> f64 {
        match *self {
            StepLaw::Smooth { offset, damping } => offset + damping * v,
            StepLaw::Stick {
                limit_pos,
                limit_neg,
                kinetic_pos,
                kinetic_neg,
                damping,
            } => {
                if v > 0.0 {
                    kinetic_pos + damping * v
                } else if v < 0.0 {
                    -kinetic_neg + damping * v
                } else {
                    u.clamp(-limit_neg, limit_pos)
                }
            }
        }
    }

    /// Solves one implicit plant step: returns `(v_{k+1}, F)`.
    #[inline]
    pub fn solve(&self, plant: &PlantSide, h: f64) -> (f64, f64) {
        let m_h = plant.mass / h;
        // Force that makes v_{k+1} = 0.
        let f_stop = m_h * plant.v + plant.u0;
        match *self {
            StepLaw::Smooth { offset, damping } => {
                let v1 = (f_stop - offset) / (m_h + plant.cu + damping);
                (v1, offset + damping * v1)
            }
            StepLaw::Stick {
                limit_pos,
                limit_neg,
                kinetic_pos,
                kinetic_neg,
                damping,
            } => {
                if f_stop <= limit_pos && f_stop >= -limit_neg {
                    return (0.0, f_stop);
                }
                let (d, kin) = if f_stop > 0.0 {
                    (1.0, kinetic_pos)
                } else {
                    (-1.0, kinetic_neg)
                };
                let v1 = (f_stop - d * kin) / (m_h + plant.cu + damping);
                if d * v1 <= 0.0 {
                    // The kinetic level exceeds the stopping force: the body stops.
                    (0.0, f_stop)
                } else {
                    (v1, d * kin + damping * v1)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smooth_solve_balances_momentum() {
        let law = StepLaw::Smooth {
            offset: 0.5,
            damping: 2.0,
        };
        let p = PlantSide {
            mass: 1.0,
            v: 0.1,
            u0: 1.0,
            cu: 0.0,
        };
        let h = 1e-3;
        let (v1, f) = law.solve(&p, h);
        assert!((p.mass * (v1 - p.v) / h - (p.u0 - f)).abs() < 1e-9);
    }

    #[test]
    fn stick_holds_below_limit_and_slides_above() {
        let law = StepLaw::Stick {
            limit_pos: 1.5,
            limit_neg: 1.5,
            kinetic_pos: 1.0,
            kinetic_neg: 1.0,
            damping: 0.0,
        };
        let at_rest = PlantSide {
            mass: 1.0,
            v: 0.0,
            u0: 1.4,
            cu: 0.0,
        };
        assert_eq!(law.solve(&at_rest, 1e-2), (0.0, 1.4));
        let pushed = PlantSide { u0: 1.6, ..at_rest };
        let (v1, f) = law.solve(&pushed, 1e-2);
        assert!(v1 > 0.0);
        assert_eq!(f, 1.0);
        assert_eq!(law.force_at(0.0, -3.0), -1.5);
    }
}
