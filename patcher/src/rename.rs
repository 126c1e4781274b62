//! Applies a [`Plan`] to a copy of the file and proves, by re-reading the copy, that exactly the
//! planned names and version entries changed.

use crate::elf::DynImage;
use crate::error::PatchError;
use crate::plan::{Plan, Rename};

/// Returns `input` with the plan's byte edits applied. The offsets come from [`DynImage::parse`],
/// which bound-checked them against this very input.
pub fn apply(input: &[u8], plan: &Plan) -> Vec<u8> {
    let mut output = input.to_vec();
    for edit in &plan.edits {
        output[edit.offset] = edit.new;
    }
    output
}

/// Re-reads `output` and checks every dynamic string against what the plan intended, so a
/// planning mistake can never reach the disk.
pub fn verify(before: &DynImage, output: &[u8], plan: &Plan) -> Result<(), PatchError> {
    let after = DynImage::parse(output)?;
    let mismatch = |what: String| Err(PatchError::Verification { what });
    if after.symbols.len() != before.symbols.len() {
        return mismatch(format!(
            "{} dynamic symbols before, {} after",
            before.symbols.len(),
            after.symbols.len()
        ));
    }
    for (old, new) in before.symbols.iter().zip(&after.symbols) {
        let rename = plan.renames.iter().find(|r| r.index == old.index);
        let expected = rename.map_or(old.name.text.as_str(), |r| r.to.as_str());
        if new.name.text != expected || new.name.offset != old.name.offset {
            return mismatch(format!(
                "symbol #{} is {:?}, expected {expected:?}",
                old.index, new.name.text
            ));
        }
        let versym = |image: &DynImage| image.versyms.as_ref().map(|v| v[old.index].value);
        let expected_versym = match rename {
            Some(Rename {
                dropped_version: Some(_),
                ..
            }) => Some(1),
            _ => versym(before),
        };
        if versym(&after) != expected_versym {
            return mismatch(format!(
                "version index of symbol #{} is {:?}, expected {expected_versym:?}",
                old.index,
                versym(&after)
            ));
        }
    }
    if after.other_strings != before.other_strings {
        return mismatch("a library, path or version name changed".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::Inventory;
    use crate::plan::{ByteEdit, FortranPolicy};
    use crate::test_elf::typical_tool;

    #[test]
    fn applies_edits_and_verifies_the_result() {
        let (bytes, _) = typical_tool();
        let image = DynImage::parse(&bytes).unwrap();
        let plan = Plan::new(&image, &Inventory::of(&image), FortranPolicy::RenameAll).unwrap();
        let out = apply(&bytes, &plan);
        verify(&image, &out, &plan).unwrap();
        let changed: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] != out[i]).collect();
        let planned: Vec<usize> = plan.edits.iter().map(|e| e.offset).collect();
        assert_eq!(changed, planned);
    }

    #[test]
    fn verification_catches_an_edit_the_plan_did_not_intend() {
        let (bytes, _) = typical_tool();
        let image = DynImage::parse(&bytes).unwrap();
        let mut plan = Plan::new(&image, &Inventory::of(&image), FortranPolicy::RenameAll).unwrap();
        let wrapper = &image.symbols[2].name;
        plan.edits.push(ByteEdit {
            offset: wrapper.offset + 1,
            old: b'P',
            new: b'Q',
        });
        let err = verify(&image, &apply(&bytes, &plan), &plan).unwrap_err();
        assert!(
            matches!(&err, PatchError::Verification { what } if what.contains("MQI_Send")),
            "{err:?}"
        );
    }
}
