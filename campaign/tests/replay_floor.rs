//! Where the true model's velocity replay of the validation run loses against the bench's
//! repeatability, measured on the default simulated bench with its ground truth beside every
//! sample (`cargo test -p campaign --test replay_floor -- --nocapture` prints the numbers):
//! the replay driven by the drive's filtered speed estimate, by the plant's true speed sampled
//! at the loop's rate, by the encoder's centred difference, and by that difference run between
//! samples so the model moves the encoder's displacement (`Speed::Displacement`, what the
//! campaign scores with, [`campaign::encoder_velocity`]); and the floor piece by piece: its
//! repeat part (the passes after the lead-in start from the same state, so they differ by the
//! sensor's noise) and its resolution part (the true model on dithered angles), which together
//! account for what the true model leaves.

use bench_daemon::config::Loaded;
use bench_daemon::control::{Control, Devices, SimIo, Status, TruthLog};
use bench_daemon::session::{self, Watchers};
use experiments::Sample;
use friction::identify::procedures::output_error::{Replay, Segment, Speed, residuals_with};

fn mse(r: &[f64]) -> f64 {
    r.iter().map(|x| x * x).sum::<f64>() / r.len() as f64
}

#[test]
fn the_true_model_leaves_about_the_floor_and_a_tenth_of_the_drive_estimates_error() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let truth = bench_sim::default_truth();
    let loaded = Loaded::sim("127.0.0.1:0");
    let (samples, log) = rt.block_on(async {
        let store = run_store::Store::open(dir.path().join("runs.db"))
            .await
            .unwrap();
        let checked = session::check_spec(campaign::design::validation(), &loaded).unwrap();
        let sim = bench_sim::Sim::new(bench_sim::SimParams::default(), &truth).unwrap();
        let log = TruthLog::default();
        let io = SimIo::new(sim).with_truth_log(log.clone());
        let watchers = Watchers {
            control: std::sync::Arc::new(Control::new()),
            status: tokio::sync::watch::channel(Status::default()).0,
            live: None,
            created: None,
        };
        let f = session::execute_on(
            &store,
            &loaded,
            &checked,
            watchers,
            Devices::Simulated(Box::new(io)),
        )
        .await
        .unwrap();
        let stored = store
            .samples(f.run_id, &run_store::SampleQuery::default())
            .await
            .unwrap();
        let s: Vec<Sample> = stored
            .samples
            .iter()
            .map(bench_daemon::session::to_experiment_sample)
            .collect();
        (s, log.take())
    });
    let pieces = campaign::design::validation_pass().len();
    let spec = campaign::design::validation().to_value();
    let (layout, lead_s) = campaign::floor::layout_of(&spec).unwrap();
    assert_eq!(layout.lead, campaign::design::LEAD_IN_PIECES);
    let lead = layout.lead as u32;
    eprintln!("samples {} truth {}", samples.len(), log.len());
    let repeat = campaign::floor::repeat_mse(&samples, layout).unwrap();
    let count = campaign::encoder_velocity::count_of(&samples);
    let resolution =
        campaign::floor::resolution_mse(&samples, layout, &truth.model, &truth.params, count)
            .unwrap();
    let floor = repeat + resolution;
    eprintln!(
        "floor {floor:.3e} = repeat {repeat:.3e} + resolution {resolution:.3e} (count {count:.3e} rad, lead-in {lead_s} s)"
    );
    let meas: Vec<f64> = samples.iter().map(Sample::measured_torque).collect();
    let tf: Vec<f64> = log.iter().map(|t| t.friction_nm).collect();
    let d: Vec<f64> = meas.iter().zip(&tf).map(|(a, b)| a - b).collect();
    eprintln!(
        "measured - true friction at the drive read: {:.3e} ({:.2} floor)",
        mse(&d),
        mse(&d) / floor
    );
    let t: Vec<f64> = samples.iter().map(|s| s.t).collect();
    let x: Vec<f64> = samples.iter().map(|s| s.x).collect();
    let v: Vec<f64> = samples.iter().map(|s| s.v).collect();
    let u: Vec<f64> = samples.iter().map(Sample::applied_torque).collect();
    let tx: Vec<f64> = log.iter().map(|s| s.x_rad).collect();
    let tv: Vec<f64> = log.iter().map(|s| s.v_rad_s).collect();
    let replay_by = |speed: Speed, name: &str, v: &[f64], x: &[f64], target: &[f64]| {
        let seg = Segment::from_columns(
            "exp",
            &["t", "x", "v", "u", "friction"],
            &[
                t.clone(),
                x.to_vec(),
                v.to_vec(),
                u.clone(),
                target.to_vec(),
            ],
        )
        .unwrap();
        let r =
            residuals_with(&truth.model, &truth.params, &[seg], Replay::Velocity, speed).unwrap();
        let r = &r[0];
        let m = mse(r);
        let slow: Vec<f64> = r
            .iter()
            .zip(&tv)
            .filter(|(_, v)| v.abs() < 1e-3)
            .map(|(r, _)| *r)
            .collect();
        let fast: Vec<f64> = r
            .iter()
            .zip(&tv)
            .filter(|(_, v)| v.abs() >= 1e-3)
            .map(|(r, _)| *r)
            .collect();
        eprintln!(
            "{name}: mse {m:.3e} = {:.2} floor; |v|<1e-3: n {} mse {:.3e}; else n {} mse {:.3e}",
            m / floor,
            slow.len(),
            mse(&slow),
            fast.len(),
            mse(&fast)
        );
        r.clone()
    };
    let replay = |name: &str, v: &[f64], x: &[f64], target: &[f64]| {
        replay_by(Speed::Linear, name, v, x, target)
    };
    replay("true v, measured torque", &tv, &tx, &meas);
    replay("measured v, true friction", &v, &x, &tf);
    replay("true v, true friction", &tv, &tx, &tf);
    let mut seg = Segment::from_columns("enc", &["t", "x"], &[t.clone(), x.clone()]).unwrap();
    campaign::encoder_velocity::from_encoder(&mut seg);
    let cv = seg.v;
    let drive = mse(&replay(
        "drive's estimate v, measured torque (before)",
        &v,
        &x,
        &meas,
    ));
    let encoder = mse(&replay(
        "encoder centred v, measured torque",
        &cv,
        &x,
        &meas,
    ));
    assert!(
        encoder < 0.1 * drive,
        "encoder {encoder:.3e} drive {drive:.3e}"
    );
    replay("encoder centred v, true friction", &cv, &x, &tf);
    let enc_r = replay_by(
        Speed::Displacement,
        "encoder centred v, the encoder's displacement, measured torque (campaign)",
        &cv,
        &x,
        &meas,
    );
    let displaced = mse(&enc_r);
    assert!(
        displaced < 0.5 * encoder,
        "displacement {displaced:.3e} centred {encoder:.3e}"
    );
    // What the comparison scores: the passes, not the lead-in.
    let scored: Vec<f64> = samples
        .iter()
        .zip(&enc_r)
        .filter(|(s, _)| layout.scored(s.segment))
        .map(|(_, r)| *r)
        .collect();
    let truth_mse = mse(&scored);
    eprintln!(
        "the true model on the passes (what the comparison scores): {truth_mse:.3e} = {:.2} floor",
        truth_mse / floor
    );
    assert!(
        (0.5..=2.0).contains(&(truth_mse / floor)),
        "truth {truth_mse:.3e} floor {floor:.3e} (repeat {repeat:.3e}, resolution {resolution:.3e})"
    );
    replay_by(
        Speed::Displacement,
        "encoder centred v, the encoder's displacement, true friction",
        &cv,
        &x,
        &tf,
    );
    replay_by(
        Speed::Displacement,
        "true v, true displacement, true friction",
        &tv,
        &tx,
        &tf,
    );
    let mut noiseless = samples.clone();
    for (s, f) in noiseless.iter_mut().zip(&tf) {
        s.torque_sensor = *f;
    }
    let f0 = campaign::floor::repeat_mse(&noiseless, layout).unwrap();
    eprintln!("repeat part of the true friction (no sensor noise): {f0:.3e}");
    // The passes start from the same state (after a lead-in pass): set against the lead-in,
    // which starts from rest, the first pass differs ten times as much.
    let from_rest = campaign::floor::Layout {
        lead: 0,
        pass: pieces,
    };
    let from_rest = campaign::floor::repeat_mse(&samples, from_rest).unwrap();
    eprintln!("the lead-in (from rest) against the first pass: {from_rest:.3e}");
    assert!(
        repeat < 0.1 * from_rest,
        "repeat {repeat:.3e} from rest {from_rest:.3e}"
    );
    for k in lead..lead + pieces as u32 {
        let a: Vec<&Sample> = samples.iter().filter(|s| s.segment == k).collect();
        let b: Vec<&Sample> = samples
            .iter()
            .filter(|s| s.segment == k + pieces as u32)
            .collect();
        let d: Vec<f64> = a
            .iter()
            .zip(&b)
            .map(|(a, b)| a.measured_torque() - b.measured_torque())
            .collect();
        let dx: Vec<f64> = a.iter().zip(&b).map(|(a, b)| a.x - b.x).collect();
        let truth_r = |seg: u32| {
            let r: Vec<f64> = samples
                .iter()
                .zip(&enc_r)
                .filter(|(s, _)| s.segment == seg)
                .map(|(_, r)| *r)
                .collect();
            mse(&r)
        };
        eprintln!(
            "piece {k}: n {} / {}, half msd {:.3e}, rms dx {:.3e}, true model's replay mse {:.3e} / {:.3e}",
            a.len(),
            b.len(),
            0.5 * mse(&d),
            mse(&dx).sqrt(),
            truth_r(k),
            truth_r(k + pieces as u32)
        );
    }
}
