//! Property tests of the library's `patch`: on arbitrary bytes and on damaged real tools it never
//! panics, and whenever it succeeds the output re-parses and differs from the input only in the
//! first bytes of renamed imports and their `.gnu.version` entries.

use std::collections::BTreeSet;
use std::fs;
use std::sync::OnceLock;

use pnmpi_patch::elf::DynImage;
use pnmpi_patch::patch;
use proptest::prelude::*;

use crate::common::*;

/// Real tools to damage: ptool (`$MPICC`) unpatched and patched, ptool_min as ELF64 and ELF32,
/// and the shared-string variant that must be refused.
fn samples() -> &'static [Vec<u8>] {
    static SAMPLES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let ptool = fs::read(ptool(dir.path())).unwrap();
        let patched = patch(&ptool, None).unwrap().output;
        let min = |lib: &str, extra: &[&str]| {
            let mut args = vec!["-nostdlib"];
            args.extend_from_slice(extra);
            fs::read(shared_lib(&cc(), dir.path(), lib, "ptool_min.c", &args)).unwrap()
        };
        vec![
            ptool,
            patched,
            min("libmin.so", &[]),
            min("libmin32.so", &["-m32"]),
            min("libclash.so", &["-DCLASH"]),
        ]
    })
}

/// The property itself; errors are fine, panics and stray edits are not.
fn check_patch(input: &[u8]) {
    let Ok(patched) = patch(input, None) else {
        return;
    };
    let before = DynImage::parse(input).expect("a patched input parses");
    let after = DynImage::parse(&patched.output).expect("the output re-parses");
    assert_eq!(patched.output.len(), input.len());
    let mut allowed = BTreeSet::new();
    for rename in &patched.plan.renames {
        allowed.insert(before.symbols[rename.index].name.offset);
        assert_eq!(after.symbols[rename.index].name.text, rename.to);
        if rename.dropped_version.is_some() {
            let versym = before.versyms.as_ref().unwrap()[rename.index].offset;
            allowed.extend([versym, versym + 1]);
        }
    }
    for (i, (a, b)) in input.iter().zip(&patched.output).enumerate() {
        assert!(
            a == b || allowed.contains(&i),
            "byte 0x{i:x} changed outside the plan"
        );
    }
}

/// Applies `(offset, value)` writes, with offsets wrapped into the file (or its first 4 KiB,
/// where the headers and dynamic tables live, when `near_start`).
fn damage(sample: &[u8], writes: &[(usize, u8)], near_start: bool) -> Vec<u8> {
    let mut bytes = sample.to_vec();
    let span = if near_start {
        bytes.len().min(4096)
    } else {
        bytes.len()
    };
    for &(offset, value) in writes {
        bytes[offset % span] = value;
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        check_patch(&bytes);
    }

    #[test]
    fn real_header_with_random_tail_never_panics(
        which in 0..5usize,
        keep in any::<prop::sample::Index>(),
        tail in proptest::collection::vec(any::<u8>(), 0..4096),
    ) {
        let sample = &samples()[which];
        let mut bytes = sample[..keep.index(sample.len())].to_vec();
        bytes.extend(tail);
        check_patch(&bytes);
    }

    #[test]
    fn truncated_real_tools_never_panic(which in 0..5usize, len in any::<prop::sample::Index>()) {
        let sample = &samples()[which];
        check_patch(&sample[..len.index(sample.len() + 1)]);
    }

    #[test]
    fn byte_flips_in_real_tools_never_panic_or_stray(
        which in 0..5usize,
        writes in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        near_start in any::<bool>(),
    ) {
        check_patch(&damage(&samples()[which], &writes, near_start));
    }
}

#[test]
fn undamaged_samples_behave_as_expected() {
    let outcomes: Vec<Option<usize>> = samples()
        .iter()
        .map(|s| patch(s, None).ok().map(|p| p.plan.renames.len()))
        .collect();
    assert_eq!(outcomes, [Some(6), Some(0), Some(2), Some(2), None]);
}
