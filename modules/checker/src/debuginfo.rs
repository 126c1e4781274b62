//! The application's variables from its debug information (DWARF, read
//! with `gimli`): at a call site, the variables in scope there (the
//! calling function's, its lexical blocks' containing the call) and the
//! object's global and static ones, each with where it lies and its C
//! type. The buffer check (`buftype`) finds the variable an MPI buffer
//! points into, as MUST finds an allocation's type through TypeART, but
//! from what `-g` already wrote.
//!
//! Only C and C++ units are read, and only locations C compilers write
//! without optimization: an offset from the frame base (the call frame's
//! address, or `rbp` after the usual prologue), or a fixed address. A
//! variable in a register or a location list is not seen, so optimized
//! code is checked less, never wrongly.

use crate::ctype::{CType, Member, Scalar};
use gimli::{AttributeValue, EndianSlice, Operation, RunTimeEndian, Unit, UnitOffset};
use object::{Object, ObjectSection};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

type R = EndianSlice<'static, RunTimeEndian>;

/// Nesting past which a type is opaque (a guard: C types nest a few levels).
const MAX_DEPTH: u32 = 8;
/// Members of a struct past which the rest is opaque.
const MAX_MEMBERS: usize = 512;
/// x86-64's frame pointer, DWARF register 6: after `push rbp; mov rbp,
/// rsp`, 16 bytes below the call frame's address.
const RBP: u16 = 6;

/// Where a variable lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// At this offset from its function's call frame address (CFA).
    Frame(i64),
    /// At this address of the object (before its load bias).
    Fixed(u64),
}

/// A variable: its name, place and type; for a pointer, the type it
/// points to (its buffer's, as C declares it).
#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    pub place: Place,
    pub ty: CType,
    pub pointee: Option<CType>,
}

/// An object's debug information, read once.
pub struct Debug {
    dwarf: gimli::Dwarf<R>,
    /// The C and C++ units and their address ranges.
    units: Vec<(Vec<gimli::Range>, Unit<R>)>,
    /// The object's global and static variables at file scope, by address.
    globals: Vec<Var>,
    /// Those of them that are pointers to a type.
    pointers: Vec<Var>,
}

impl Debug {
    /// Reads the object at `path`; `None` without debug information on
    /// C or C++ variables. The file's bytes are kept for the process's
    /// life (an object's debug information is read at most once).
    pub fn load(path: &Path) -> Option<Debug> {
        let bytes: &'static [u8] = Box::leak(std::fs::read(path).ok()?.into_boxed_slice());
        let file = object::File::parse(bytes).ok()?;
        let endian = if file.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let sections = gimli::DwarfSections::load(|id| -> Result<&'static [u8], gimli::Error> {
            Ok(
                match file.section_by_name(id.name()).map(|s| s.uncompressed_data()) {
                    Some(Ok(Cow::Borrowed(data))) => data,
                    Some(Ok(Cow::Owned(data))) => Box::leak(data.into_boxed_slice()),
                    _ => &[],
                },
            )
        })
        .ok()?;
        let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
        let mut units = Vec::new();
        let mut headers = dwarf.units();
        while let Ok(Some(header)) = headers.next() {
            let Ok(unit) = dwarf.unit(header) else { continue };
            if !is_c(&unit) {
                continue;
            }
            let mut ranges = Vec::new();
            if let Ok(mut iter) = dwarf.unit_ranges(&unit) {
                while let Ok(Some(r)) = iter.next() {
                    ranges.push(r);
                }
            }
            units.push((ranges, unit));
        }
        if units.is_empty() {
            return None;
        }
        let mut debug = Debug {
            dwarf,
            units,
            globals: Vec::new(),
            pointers: Vec::new(),
        };
        let mut globals: Vec<Var> = (0..debug.units.len()).flat_map(|u| debug.file_scope(u)).collect();
        globals.sort_by_key(|v| fixed(v).unwrap_or(0));
        debug.pointers = globals.iter().filter(|v| v.pointee.is_some()).cloned().collect();
        debug.globals = globals;
        Some(debug)
    }

    /// Whether the object has variables at file scope.
    pub fn has_globals(&self) -> bool {
        !self.globals.is_empty()
    }

    /// The variable at file scope whose bytes hold `addr` (an address of
    /// the object, before its load bias): a binary search.
    pub fn global_at(&self, addr: u64) -> Option<&Var> {
        let i = self.globals.partition_point(|v| fixed(v).unwrap_or(0) <= addr);
        let v = self.globals.get(i.checked_sub(1)?)?;
        (addr < fixed(v)? + v.ty.size()).then_some(v)
    }

    /// The pointer variables at file scope.
    pub fn pointers(&self) -> &[Var] {
        &self.pointers
    }

    /// The variables in scope at `pc` (an address of the object, before
    /// its load bias), innermost block first: the function's locals and
    /// parameters, its static locals.
    pub fn scope(&self, pc: u64) -> Vec<Var> {
        let mut found = Vec::new();
        for (ranges, unit) in &self.units {
            if !ranges.iter().any(|r| r.begin <= pc && pc < r.end) {
                continue;
            }
            let Ok(mut tree) = unit.entries_tree(None) else {
                continue;
            };
            let Ok(root) = tree.root() else { continue };
            let mut reader = Reader {
                dwarf: &self.dwarf,
                unit,
                types: HashMap::new(),
            };
            reader.find(root, pc, None, &mut found);
            if !found.is_empty() {
                break;
            }
        }
        found.reverse();
        found
    }

    /// Unit `u`'s variables with a fixed address, at its top level.
    fn file_scope(&self, u: usize) -> Vec<Var> {
        let unit = &self.units[u].1;
        let mut vars = Vec::new();
        let Ok(mut tree) = unit.entries_tree(None) else {
            return vars;
        };
        let Ok(root) = tree.root() else { return vars };
        let mut reader = Reader {
            dwarf: &self.dwarf,
            unit,
            types: HashMap::new(),
        };
        let mut children = root.children();
        while let Ok(Some(child)) = children.next() {
            let entry = child.entry();
            if entry.tag() == gimli::DW_TAG_variable {
                if let Some(var) = reader
                    .var(entry, None)
                    .filter(|v| matches!(v.place, Place::Fixed(_)))
                {
                    vars.push(var);
                }
            }
        }
        vars
    }
}

/// A variable's fixed address, if it has one.
fn fixed(v: &Var) -> Option<u64> {
    match v.place {
        Place::Fixed(a) => Some(a),
        Place::Frame(_) => None,
    }
}

/// Whether a unit is C or C++.
fn is_c(unit: &Unit<R>) -> bool {
    let Ok(mut tree) = unit.entries_tree(None) else {
        return false;
    };
    let Ok(root) = tree.root() else { return false };
    matches!(
        root.entry().attr_value(gimli::DW_AT_language),
        Some(AttributeValue::Language(
            gimli::DW_LANG_C
                | gimli::DW_LANG_C89
                | gimli::DW_LANG_C99
                | gimli::DW_LANG_C11
                | gimli::DW_LANG_C17
                | gimli::DW_LANG_C_plus_plus
                | gimli::DW_LANG_C_plus_plus_03
                | gimli::DW_LANG_C_plus_plus_11
                | gimli::DW_LANG_C_plus_plus_14
                | gimli::DW_LANG_C_plus_plus_17
                | gimli::DW_LANG_C_plus_plus_20
        ))
    )
}

/// The frame base of a function, as an offset from its CFA.
#[derive(Clone, Copy)]
struct Base(i64);

/// Reads one unit's entries, converting each type once.
struct Reader<'a> {
    dwarf: &'a gimli::Dwarf<R>,
    unit: &'a Unit<R>,
    types: HashMap<UnitOffset, CType>,
}

impl Reader<'_> {
    /// Walks `node`'s children for the function and blocks holding `pc`,
    /// collecting their variables (outermost first) into `found`.
    fn find(
        &mut self,
        node: gimli::EntriesTreeNode<'_, '_, R>,
        pc: u64,
        base: Option<Base>,
        found: &mut Vec<Var>,
    ) {
        let mut children = node.children();
        while let Ok(Some(child)) = children.next() {
            let entry = child.entry();
            let tag = entry.tag();
            let scope = matches!(
                tag,
                gimli::DW_TAG_subprogram | gimli::DW_TAG_lexical_block | gimli::DW_TAG_namespace
            );
            if scope && (tag == gimli::DW_TAG_namespace || self.holds(entry, pc)) {
                let base = if tag == gimli::DW_TAG_subprogram {
                    frame_base(entry, self.unit)
                } else {
                    base
                };
                let inner = tag == gimli::DW_TAG_subprogram;
                self.find(child, pc, base, found);
                if inner && !found.is_empty() {
                    return;
                }
            } else if base.is_some() && matches!(tag, gimli::DW_TAG_variable | gimli::DW_TAG_formal_parameter)
            {
                if let Some(var) = self.var(entry, base) {
                    found.push(var);
                }
            }
        }
    }

    /// Whether `entry`'s address ranges hold `pc`.
    fn holds(&self, entry: &gimli::DebuggingInformationEntry<R>, pc: u64) -> bool {
        let Ok(mut ranges) = self.dwarf.die_ranges(self.unit, entry) else {
            return false;
        };
        while let Ok(Some(r)) = ranges.next() {
            if r.begin <= pc && pc < r.end {
                return true;
            }
        }
        false
    }

    /// A variable with a location this reader understands.
    fn var(&mut self, entry: &gimli::DebuggingInformationEntry<R>, base: Option<Base>) -> Option<Var> {
        let expr = entry.attr_value(gimli::DW_AT_location)?;
        let AttributeValue::Exprloc(expr) = expr else {
            return None;
        };
        let mut ops = expr.operations(self.unit.encoding());
        let place = match (ops.next().ok()??, ops.next().ok()?) {
            (Operation::FrameOffset { offset }, None) => Place::Frame(base?.0 + offset),
            (Operation::Address { address }, None) => Place::Fixed(address),
            _ => return None,
        };
        let name = entry
            .attr_value(gimli::DW_AT_name)
            .and_then(|a| self.dwarf.attr_string(self.unit, a).ok())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let offset = type_of(entry)?;
        let ty = self.ctype(offset, 0);
        let pointee = match ty {
            CType::Scalar(Scalar { kind: b'p', .. }) => self.pointee(offset),
            _ => None,
        };
        Some(Var {
            name,
            place,
            ty,
            pointee,
        })
    }

    /// The type a pointer type at `offset` (through typedefs and
    /// qualifiers) points to; `None` for `void *`.
    fn pointee(&mut self, offset: UnitOffset) -> Option<CType> {
        let entry = self.unit.entry(self.strip(offset)?).ok()?;
        let to = type_of(&entry)?;
        let ty = self.ctype(to, 1);
        (ty.size() > 0).then_some(ty)
    }

    /// `offset` past typedefs and qualifiers.
    fn strip(&self, mut offset: UnitOffset) -> Option<UnitOffset> {
        for _ in 0..MAX_DEPTH {
            let entry = self.unit.entry(offset).ok()?;
            if !is_alias(entry.tag()) {
                return Some(offset);
            }
            offset = type_of(&entry)?;
        }
        None
    }

    /// The C type at `offset`.
    fn ctype(&mut self, offset: UnitOffset, depth: u32) -> CType {
        if let Some(t) = self.types.get(&offset) {
            return t.clone();
        }
        let t = self.convert(offset, depth);
        self.types.insert(offset, t.clone());
        t
    }

    fn convert(&mut self, offset: UnitOffset, depth: u32) -> CType {
        let Ok(entry) = self.unit.entry(offset) else {
            return CType::Opaque(0);
        };
        let size = entry
            .attr_value(gimli::DW_AT_byte_size)
            .and_then(|v| v.udata_value())
            .unwrap_or(0);
        if depth > MAX_DEPTH {
            return CType::Opaque(size);
        }
        let inner = |r: &mut Self| type_of(&entry).map(|t| r.ctype(t, depth + 1));
        match entry.tag() {
            gimli::DW_TAG_base_type => {
                let kind = match entry.attr_value(gimli::DW_AT_encoding) {
                    Some(AttributeValue::Encoding(e)) => match e {
                        gimli::DW_ATE_signed => b'i',
                        gimli::DW_ATE_unsigned | gimli::DW_ATE_UTF => b'u',
                        gimli::DW_ATE_signed_char | gimli::DW_ATE_unsigned_char => b'r',
                        gimli::DW_ATE_float => b'f',
                        gimli::DW_ATE_complex_float => b'c',
                        gimli::DW_ATE_boolean => b'b',
                        _ => return CType::Opaque(size),
                    },
                    _ => return CType::Opaque(size),
                };
                CType::Scalar(Scalar { kind, size })
            }
            gimli::DW_TAG_pointer_type
            | gimli::DW_TAG_reference_type
            | gimli::DW_TAG_rvalue_reference_type => CType::Scalar(Scalar {
                kind: b'p',
                size: if size == 0 { 8 } else { size },
            }),
            gimli::DW_TAG_enumeration_type => CType::Scalar(Scalar { kind: b'e', size }),
            tag if is_alias(tag) => inner(self).unwrap_or(CType::Opaque(0)),
            gimli::DW_TAG_array_type => {
                let Some(mut elem) = inner(self) else {
                    return CType::Opaque(size);
                };
                let dims = self.dims(offset);
                if dims.is_empty() {
                    return CType::Opaque(size);
                }
                for &len in dims.iter().rev() {
                    elem = CType::Array {
                        elem: Box::new(elem),
                        len,
                    };
                }
                elem
            }
            gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type => {
                if entry.attr_value(gimli::DW_AT_declaration).is_some() {
                    return CType::Opaque(0);
                }
                let name = entry
                    .attr_value(gimli::DW_AT_name)
                    .and_then(|a| self.dwarf.attr_string(self.unit, a).ok())
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let members = self.members(offset, depth);
                CType::Struct { name, size, members }
            }
            _ => CType::Opaque(size),
        }
    }

    /// An array type's dimensions (0: unknown).
    fn dims(&self, offset: UnitOffset) -> Vec<u64> {
        let mut dims = Vec::new();
        let Ok(mut tree) = self.unit.entries_tree(Some(offset)) else {
            return dims;
        };
        let Ok(root) = tree.root() else { return dims };
        let mut children = root.children();
        while let Ok(Some(child)) = children.next() {
            let e = child.entry();
            if e.tag() != gimli::DW_TAG_subrange_type {
                continue;
            }
            let count = e.attr_value(gimli::DW_AT_count).and_then(|v| v.udata_value());
            let upper = e
                .attr_value(gimli::DW_AT_upper_bound)
                .and_then(|v| v.udata_value());
            dims.push(count.or(upper.map(|u| u + 1)).unwrap_or(0));
        }
        dims
    }

    /// A struct's members (a bit field's as opaque).
    fn members(&mut self, offset: UnitOffset, depth: u32) -> Vec<Member> {
        let mut raw = Vec::new();
        if let Ok(mut tree) = self.unit.entries_tree(Some(offset)) {
            if let Ok(root) = tree.root() {
                let mut children = root.children();
                while let Ok(Some(child)) = children.next() {
                    let e = child.entry();
                    if !matches!(e.tag(), gimli::DW_TAG_member | gimli::DW_TAG_inheritance) {
                        continue;
                    }
                    if e.attr_value(gimli::DW_AT_external).is_some() {
                        continue; // a C++ static member lies elsewhere
                    }
                    let at = e
                        .attr_value(gimli::DW_AT_data_member_location)
                        .and_then(|v| v.udata_value())
                        .unwrap_or(0);
                    let bits = e.attr_value(gimli::DW_AT_bit_size).is_some();
                    let name = e
                        .attr_value(gimli::DW_AT_name)
                        .and_then(|a| self.dwarf.attr_string(self.unit, a).ok())
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_else(|| "(base)".into());
                    raw.push((name, at, type_of(e), bits));
                    if raw.len() == MAX_MEMBERS {
                        break;
                    }
                }
            }
        }
        raw.into_iter()
            .map(|(name, offset, ty, bits)| {
                let ty = match ty {
                    Some(t) if !bits => self.ctype(t, depth + 1),
                    Some(t) => CType::Opaque(self.ctype(t, depth + 1).size()),
                    None => CType::Opaque(0),
                };
                Member { name, offset, ty }
            })
            .collect()
    }
}

/// Tags that name another type: typedefs and qualifiers.
fn is_alias(tag: gimli::DwTag) -> bool {
    matches!(
        tag,
        gimli::DW_TAG_typedef
            | gimli::DW_TAG_const_type
            | gimli::DW_TAG_volatile_type
            | gimli::DW_TAG_restrict_type
            | gimli::DW_TAG_atomic_type
    )
}

/// An entry's `DW_AT_type`, within its unit.
fn type_of(entry: &gimli::DebuggingInformationEntry<R>) -> Option<UnitOffset> {
    match entry.attr_value(gimli::DW_AT_type)? {
        AttributeValue::UnitRef(o) => Some(o),
        _ => None,
    }
}

/// A function's frame base as an offset from its CFA: the CFA itself
/// (gcc), or `rbp` after the usual prologue on x86-64 (clang at `-O0`).
fn frame_base(entry: &gimli::DebuggingInformationEntry<R>, unit: &Unit<R>) -> Option<Base> {
    let Some(AttributeValue::Exprloc(expr)) = entry.attr_value(gimli::DW_AT_frame_base) else {
        return None;
    };
    let mut ops = expr.operations(unit.encoding());
    match (ops.next().ok()??, ops.next().ok()?) {
        (Operation::CallFrameCFA, None) => Some(Base(0)),
        (Operation::Register { register }, None) if cfg!(target_arch = "x86_64") && register.0 == RBP => {
            Some(Base(-16))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds `source` with `cc -g -O0` into a temporary directory.
    fn build(source: &str) -> Option<std::path::PathBuf> {
        let dir = std::env::temp_dir().join(format!("pnmpi-debuginfo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let (c, exe) = (dir.join("vars.c"), dir.join("vars"));
        std::fs::write(&c, source).ok()?;
        let ok = std::process::Command::new("cc")
            .args(["-g", "-O0", "-o"])
            .arg(&exe)
            .arg(&c)
            .status()
            .ok()?
            .success();
        ok.then_some(exe)
    }

    /// `main`'s address range in the built program.
    fn main_pc(debug: &Debug) -> u64 {
        for (_, unit) in &debug.units {
            let mut cursor = unit.entries();
            while let Ok(Some(e)) = cursor.next_dfs() {
                let named_main = e
                    .attr_value(gimli::DW_AT_name)
                    .and_then(|a| debug.dwarf.attr_string(unit, a).ok())
                    .is_some_and(|s| s.slice() == b"main");
                if e.tag() == gimli::DW_TAG_subprogram && named_main {
                    let mut r = debug.dwarf.die_ranges(unit, e).unwrap();
                    let r = r.next().unwrap().unwrap();
                    return r.end - 1;
                }
            }
        }
        panic!("no main");
    }

    #[test]
    fn a_functions_variables_and_the_globals_are_read_with_their_types() {
        let src = "struct pt { int n; double x; };\n\
                   double grid[8];\n\
                   long *cursor;\n\
                   int main(int argc, char **argv) {\n\
                     int counts[4] = {0};\n\
                     struct pt p = {1, 2.0};\n\
                     unsigned *heap = 0;\n\
                     return counts[0] + p.n + (heap != 0) + (int) grid[0] + argc + (argv != 0);\n\
                   }\n";
        let Some(exe) = build(src) else {
            eprintln!("no C compiler: skipped");
            return;
        };
        let debug = Debug::load(&exe).expect("debug information");
        assert!(debug.has_globals());
        let pointers: Vec<_> = debug.pointers().iter().map(|v| v.name.as_str()).collect();
        assert_eq!(pointers, ["cursor"]);
        let grid = debug.globals.iter().find(|v| v.name == "grid").expect("grid");
        assert_eq!(grid.ty.describe(), "double[8]");
        let Place::Fixed(at) = grid.place else {
            panic!("{grid:?}")
        };
        assert_eq!(debug.global_at(at + 63).map(|v| v.name.as_str()), Some("grid"));
        assert!(debug.global_at(at + 64).is_none_or(|v| v.name != "grid"));
        let vars = debug.scope(main_pc(&debug));
        let by = |n: &str| {
            vars.iter()
                .find(|v| v.name == n)
                .unwrap_or_else(|| panic!("{n} in {vars:?}"))
        };
        assert_eq!(by("counts").ty.describe(), "int[4]");
        assert_eq!(by("counts").ty.size(), 16);
        assert!(matches!(by("counts").place, Place::Frame(o) if o < 0));
        let p = by("p");
        assert_eq!(p.ty.describe(), "struct pt");
        assert_eq!(
            p.ty.scalar_at(8).map(|(s, path)| (s.kind, path)),
            Some((b'f', ".x".into()))
        );
        let heap = by("heap");
        assert_eq!(
            heap.pointee.as_ref().map(CType::describe),
            Some("unsigned int".into())
        );
        assert!(by("argv").pointee.is_some());
        // Two variables never share a place.
        let mut places: Vec<_> = vars.iter().map(|v| format!("{:?}", v.place)).collect();
        places.sort();
        places.dedup();
        assert_eq!(places.len(), vars.len());
    }
}
