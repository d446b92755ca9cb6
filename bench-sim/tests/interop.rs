//! Interoperability with a Modbus stack we did not write: a pymodbus 3.16.1 client reads and
//! writes the simulated bench over TCP and over an RTU pty. The plan of operations is built from
//! the shipped profiles; the script only executes it.

use crate::util::*;
use protocols::{Mode, Profile, Role};
use serde_json::{Value, json};

fn python() -> String {
    std::env::var("FRICTIONBENCH_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn read(p: &Profile, unit: u8, role: Role) -> Value {
    let s = p.role(role).unwrap();
    json!({"op": "read", "unit": unit, "address": s.address, "count": s.registers()})
}

fn write(p: &Profile, unit: u8, role: Role, si: f64) -> Value {
    let s = p.role(role).unwrap();
    json!({"op": "write", "unit": unit, "address": s.address, "values": s.encode(si).unwrap()})
}

fn regs(v: &Value) -> Vec<u16> {
    v["registers"]
        .as_array()
        .unwrap_or_else(|| panic!("expected registers, got {v}"))
        .iter()
        .map(|x| x.as_u64().unwrap() as u16)
        .collect()
}

async fn pymodbus_reads_and_writes(link: Link) {
    let tb = TestBench::virtual_time(link).await;
    let (d, s) = (&tb.drive, &tb.sensor);
    let ep = tb.sim.endpoints().clone();
    let (du, su) = (ep.drive_unit, ep.sensor_unit);
    let mut plan = vec![read(d, du, Role::Status)];
    for cw in [6.0, 7.0, 15.0] {
        plan.push(write(d, du, Role::ControlWord, cw));
        plan.push(read(d, du, Role::Status));
    }
    plan.push(write(d, du, Role::Mode, d.modes[&Mode::Velocity] as f64));
    for _ in 0..300 {
        plan.push(write(d, du, Role::VelocityCommand, 2.0));
    }
    plan.push(read(d, du, Role::VelocityFeedback));
    plan.push(read(s, su, Role::MeasuredTorque));
    let end = d
        .signals
        .iter()
        .map(|x| x.address + x.registers())
        .max()
        .unwrap();
    plan.push(json!({"op": "read", "unit": du, "address": end, "count": 1}));

    let mut cmd = std::process::Command::new(python());
    cmd.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/pymodbus_client.py"
    ));
    match link {
        Link::Tcp => cmd.args(["--tcp", &ep.tcp.unwrap().to_string()]),
        _ => cmd.args([
            "--rtu",
            ep.rtu.as_deref().unwrap(),
            "--baud",
            &ep.baud.unwrap().to_string(),
        ]),
    };
    cmd.arg(Value::Array(plan).to_string());
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("cannot run {}: {e} (set FRICTIONBENCH_PYTHON)", python()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() != Some(3),
        "pymodbus 3.16.1 is required for the interoperability tests \
         (./scripts/test.sh installs it and sets FRICTIONBENCH_PYTHON): {stderr}"
    );
    assert!(out.status.success(), "pymodbus client failed: {stderr}");
    let res: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let status = |i: usize| regs(&res[i])[0] & 0x6F;
    assert_eq!(status(0) & 0x4F, 0x40, "switch on disabled");
    assert_eq!(status(2), 0x21);
    assert_eq!(status(4), 0x23);
    assert_eq!(status(6), 0x27);
    let n = res.len();
    let v = d
        .role(Role::VelocityFeedback)
        .unwrap()
        .decode(&regs(&res[n - 3]))
        .unwrap();
    assert!((v - 2.0).abs() < 0.05, "velocity feedback {v}");
    let t = s
        .role(Role::MeasuredTorque)
        .unwrap()
        .decode(&regs(&res[n - 2]))
        .unwrap();
    let f = tb.sim.bench().truth().friction_nm;
    assert!((t - f).abs() < 0.02, "sensor {t} vs true friction {f}");
    assert_eq!(
        res[n - 1]["exception"],
        2,
        "illegal address: {}",
        res[n - 1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pymodbus_client_over_tcp() {
    pymodbus_reads_and_writes(Link::Tcp).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pymodbus_client_over_rtu() {
    pymodbus_reads_and_writes(Link::RtuTimed(115_200)).await;
}
