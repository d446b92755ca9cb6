//! Tests of the MAT-file reader: files laid out as MATLAB writes them, damaged files.

use super::*;
use std::io::Write;

/// A level 5 MAT-file of double variables (`compress`: each in an `miCOMPRESSED` element),
/// written as MATLAB lays it out; `big`: big-endian.
fn mat_file(vars: &[(&str, usize, usize, &[f64])], compress: bool, big: bool) -> Vec<u8> {
    let u32b = |x: u32| {
        if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        }
    };
    let mut out = Vec::new();
    let mut text = b"MATLAB 5.0 MAT-file, written by the frictionbench tests".to_vec();
    text.resize(116, b' ');
    out.extend_from_slice(&text);
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&if big {
        0x0100u16.to_be_bytes()
    } else {
        0x0100u16.to_le_bytes()
    });
    out.extend_from_slice(if big { b"MI" } else { b"IM" });
    let sub = |ty: u32, data: &[u8]| {
        let mut e = Vec::new();
        if data.len() <= 4 && ty != MI_DOUBLE {
            e.extend_from_slice(&u32b(((data.len() as u32) << 16) | ty));
            let mut d = data.to_vec();
            d.resize(4, 0);
            e.extend_from_slice(&d);
        } else {
            e.extend_from_slice(&u32b(ty));
            e.extend_from_slice(&u32b(data.len() as u32));
            e.extend_from_slice(data);
            e.resize(e.len().div_ceil(8) * 8, 0);
        }
        e
    };
    for (name, rows, cols, values) in vars {
        let mut body = Vec::new();
        let mut flags = u32b(6).to_vec(); // mxDOUBLE_CLASS
        flags.extend_from_slice(&[0; 4]);
        body.extend(sub(MI_UINT32, &flags));
        let dims: Vec<u8> = [*rows as u32, *cols as u32]
            .iter()
            .flat_map(|&d| u32b(d))
            .collect();
        body.extend(sub(MI_INT32, &dims));
        body.extend(sub(MI_INT8, name.as_bytes()));
        let real: Vec<u8> = values
            .iter()
            .flat_map(|v| {
                if big {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                }
            })
            .collect();
        body.extend(sub(MI_DOUBLE, &real));
        let mut matrix = u32b(MI_MATRIX).to_vec();
        matrix.extend_from_slice(&u32b(body.len() as u32));
        matrix.extend(body);
        if compress {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            z.write_all(&matrix).unwrap();
            let z = z.finish().unwrap();
            out.extend_from_slice(&u32b(MI_COMPRESSED));
            out.extend_from_slice(&u32b(z.len() as u32));
            out.extend(z);
        } else {
            out.extend(matrix);
        }
    }
    out
}

fn open(bytes: &[u8]) -> (tempfile::TempDir, Result<MatTable, ImportError>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.mat");
    std::fs::write(&path, bytes).unwrap();
    let t = MatTable::open(&path, "rec.mat");
    (dir, t)
}

fn read_all(t: &mut MatTable, picks: &[usize]) -> Result<Vec<Vec<f64>>, ImportError> {
    let mut out = Vec::new();
    t.read(picks, &mut |_, v| {
        out.push(v.to_vec());
        Ok(())
    })?;
    Ok(out)
}

#[test]
fn compressed_and_plain_files_in_both_byte_orders_read_the_same() {
    let t: Vec<f64> = (0..300).map(|k| k as f64 * 1e-3).collect();
    let x: Vec<f64> = (0..300).map(|k| (k as f64).sin()).collect();
    let m: Vec<f64> = (0..600).map(|k| k as f64).collect();
    for compress in [true, false] {
        for big in [false, true] {
            let bytes = mat_file(
                &[("t", 300, 1, &t), ("qm", 1, 300, &x), ("data", 300, 2, &m)],
                compress,
                big,
            );
            let (_d, table) = open(&bytes);
            let mut table = table.unwrap();
            assert_eq!(table.names(), ["t", "qm", "data:1", "data:2"]);
            let rows = read_all(&mut table, &[0, 1, 3]).unwrap();
            assert_eq!(rows.len(), 300);
            assert_eq!(
                rows[7],
                [7e-3, 7f64.sin(), 307.0],
                "compress {compress}, big {big}"
            );
        }
    }
}

#[test]
fn damaged_files_are_refused_without_a_panic() {
    let t: Vec<f64> = (0..64).map(|k| k as f64).collect();
    let good = mat_file(&[("t", 64, 1, &t), ("x", 8, 8, &t)], true, false);
    let plain = mat_file(&[("t", 64, 1, &t), ("x", 8, 8, &t)], false, true);
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..300 {
        let mut bytes = if round % 2 == 0 {
            good.clone()
        } else {
            plain.clone()
        };
        for _ in 0..1 + next() % 6 {
            let at = 128 + (next() as usize) % (bytes.len() - 128);
            bytes[at] = next() as u8;
        }
        bytes.truncate(128 + (next() as usize) % (bytes.len() - 127));
        let (_d, table) = open(&bytes);
        if let Ok(mut table) = table {
            let n = table.names().len();
            let picks: Vec<usize> = (0..n).collect();
            let _ = read_all(&mut table, &picks);
        }
    }
}

#[test]
fn unequal_lengths_and_foreign_files_are_refused() {
    let bytes = mat_file(
        &[("t", 3, 1, &[0.0, 1.0, 2.0]), ("x", 2, 1, &[0.0, 1.0])],
        true,
        false,
    );
    let (_d, table) = open(&bytes);
    let err = read_all(&mut table.unwrap(), &[0, 1]).unwrap_err();
    assert_eq!(
        err.to_string(),
        ": 't' has 3 values and 'x' 2: the columns of a recording must be equally long"
    );
    let mut v73 = b"MATLAB 7.3 MAT-file, Platform: GLNXA64".to_vec();
    v73.resize(128, 0);
    let (_d, t) = open(&v73);
    assert!(
        t.err()
            .unwrap()
            .to_string()
            .contains("MATLAB 7.3 MAT-file (HDF5) is not read")
    );
    let (_d, t) = open(b"t,x\n0,1\n");
    assert!(t.is_err());
}
