//! C types of the application's variables, as its debug information
//! describes them (`debuginfo`), reduced to what a buffer check needs:
//! sizes, the scalar at each byte offset, and the members' names. A
//! buffer's datatype is compared with them (`buftype`), as MUST does with
//! TypeART's allocation types: `MPI_DOUBLE` on an `int`, 2 N elements
//! into an array of N.

/// A scalar: its kind, in the letters of the predefined datatypes' kinds
/// (`consts.c`: `i` signed and `u` unsigned integers, `f` floating point,
/// `c` complex, `b` booleans, `r` raw bytes, C's `char`), `p` for a
/// pointer or `e` for an enumeration; and its size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scalar {
    pub kind: u8,
    pub size: u64,
}

/// A C type.
#[derive(Clone, Debug, PartialEq)]
pub enum CType {
    Scalar(Scalar),
    /// `len` elements (0: of unknown length, as `int a[]`).
    Array {
        elem: Box<CType>,
        len: u64,
    },
    /// A struct or class: its name, size and members.
    Struct {
        name: String,
        size: u64,
        members: Vec<Member>,
    },
    /// Anything else (unions, functions, `void`): its size, not looked into.
    Opaque(u64),
}

/// A member of a struct.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub name: String,
    pub offset: u64,
    pub ty: CType,
}

impl CType {
    /// The size in bytes.
    pub fn size(&self) -> u64 {
        match self {
            CType::Scalar(s) => s.size,
            CType::Array { elem, len } => elem.size().saturating_mul(*len),
            CType::Struct { size, .. } => *size,
            CType::Opaque(size) => *size,
        }
    }

    /// The scalar that starts at byte `offset`, with the path to it
    /// (`[3]`, `.x`); `None` where no scalar starts there (padding, the
    /// middle of a scalar, an opaque part).
    pub fn scalar_at(&self, offset: u64) -> Option<(Scalar, String)> {
        match self {
            CType::Scalar(s) if s.kind == b'c' && offset == s.size / 2 => Some((
                Scalar {
                    kind: b'f',
                    size: s.size / 2,
                },
                " (imaginary part)".into(),
            )),
            CType::Scalar(s) => (offset == 0).then(|| (*s, String::new())),
            CType::Array { elem, .. } => {
                let size = elem.size();
                if size == 0 || offset >= self.size() {
                    return None;
                }
                let (i, rest) = (offset / size, offset % size);
                elem.scalar_at(rest).map(|(s, path)| (s, format!("[{i}]{path}")))
            }
            CType::Struct { members, .. } => members
                .iter()
                .filter(|m| offset >= m.offset && offset < m.offset + m.ty.size().max(1))
                .find_map(|m| {
                    m.ty.scalar_at(offset - m.offset)
                        .map(|(s, path)| (s, format!(".{}{path}", m.name)))
                }),
            CType::Opaque(_) => None,
        }
    }

    /// Whether bytes `[offset, offset + len)` hold only parts that are
    /// not looked into (an opaque member, a union), where no check holds.
    pub fn opaque_at(&self, offset: u64) -> bool {
        match self {
            CType::Scalar(_) => false,
            CType::Array { elem, .. } => {
                let size = elem.size();
                size != 0 && elem.opaque_at(offset % size)
            }
            CType::Struct { members, .. } => members
                .iter()
                .find(|m| offset >= m.offset && offset < m.offset + m.ty.size().max(1))
                .is_some_and(|m| m.ty.opaque_at(offset - m.offset)),
            CType::Opaque(_) => true,
        }
    }

    /// The struct that starts at byte `offset`: this one at 0, or an
    /// element of an array of structs.
    pub fn struct_at(&self, offset: u64) -> Option<&CType> {
        match self {
            CType::Struct { .. } if offset == 0 => Some(self),
            CType::Array { elem, .. } => {
                let size = elem.size();
                (size != 0 && offset.is_multiple_of(size) && offset < self.size())
                    .then_some(&**elem)
                    .filter(|e| matches!(e, CType::Struct { .. }))
            }
            _ => None,
        }
    }

    /// The type as C writes it, short: `int[4]`, `struct point`, `double`.
    pub fn describe(&self) -> String {
        match self {
            CType::Scalar(s) => scalar_name(*s).to_string(),
            CType::Array { elem, len } => format!("{}[{len}]", elem.describe()),
            CType::Struct { name, .. } if name.is_empty() => "an unnamed struct".into(),
            CType::Struct { name, .. } => format!("struct {name}"),
            CType::Opaque(size) => format!("an object of {size} bytes"),
        }
    }
}

/// A scalar's usual C name.
pub fn scalar_name(s: Scalar) -> &'static str {
    match (s.kind, s.size) {
        (b'i', 1) | (b'r', 1) => "char",
        (b'i', 2) => "short",
        (b'i', 4) => "int",
        (b'i', 8) => "long",
        (b'u', 1) => "unsigned char",
        (b'u', 2) => "unsigned short",
        (b'u', 4) => "unsigned int",
        (b'u', 8) => "unsigned long",
        (b'f', 4) => "float",
        (b'f', 8) => "double",
        (b'f', _) => "long double",
        (b'c', 8) => "float complex",
        (b'c', _) => "double complex",
        (b'b', _) => "bool",
        (b'p', _) => "pointer",
        (b'e', _) => "enum",
        _ => "scalar",
    }
}

/// Whether an element of a predefined datatype of `kind` and `size` may
/// lie where C has `c`, a member of a struct if `member`: the same kind
/// and size. `x`, an untyped datatype (`MPI_BYTE`, `MPI_PACKED`), goes
/// anywhere; outside structs, a variable of C's `char` holds anything
/// and `MPI_CHAR` goes anywhere, as both are how C and MPI name an
/// object's bytes; a struct's `char` member, though, holds only
/// `MPI_CHAR` or another 1-byte integer, and `MPI_CHAR` goes only there.
/// Integers of either sign hold enumerations and pointers of their size
/// (an address sent as `MPI_AINT`), a wide character is an integer, and
/// a complex number is two reals of half its size (a `{re, im}` struct).
pub fn fits(kind: u8, size: u64, c: Scalar, member: bool) -> bool {
    let integer = |k: u8| matches!(k, b'i' | b'u' | b'w');
    let byte = |k: u8, size: u64| k == b'r' || integer(k) && size == 1;
    match (kind, c.kind) {
        (b'x', _) => true,
        (b'r', _) | (_, b'r') if !member => true,
        (b'r', _) => byte(c.kind, c.size),
        (_, b'r') => byte(kind, size),
        (b'c', b'f') => size == 2 * c.size,
        (b'f', b'c') => 2 * size == c.size,
        _ => {
            size == c.size
                && (kind == c.kind
                    || kind == b'w' && integer(c.kind)
                    || matches!(c.kind, b'e' | b'p') && integer(kind))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INT: Scalar = Scalar { kind: b'i', size: 4 };
    const DOUBLE: Scalar = Scalar { kind: b'f', size: 8 };

    /// A struct of 16 bytes: an int `n` at 0 and `second` at 8.
    fn pair(name: &str, second: (&str, CType)) -> CType {
        CType::Struct {
            name: name.into(),
            size: 16,
            members: vec![
                Member {
                    name: "n".into(),
                    offset: 0,
                    ty: CType::Scalar(INT),
                },
                Member {
                    name: second.0.into(),
                    offset: 8,
                    ty: second.1,
                },
            ],
        }
    }

    fn point() -> CType {
        pair("p", ("x", CType::Scalar(DOUBLE)))
    }

    #[test]
    fn scalars_are_found_by_offset_through_arrays_and_members() {
        let a = CType::Array {
            elem: Box::new(point()),
            len: 3,
        };
        assert_eq!(a.size(), 48);
        assert_eq!(a.scalar_at(24), Some((DOUBLE, "[1].x".into())));
        assert_eq!(a.scalar_at(32), Some((INT, "[2].n".into())));
        // Padding and the middle of a scalar hold none.
        assert_eq!(a.scalar_at(4), None);
        assert_eq!(a.scalar_at(10), None);
        assert_eq!(a.scalar_at(48), None);
        assert_eq!(a.describe(), "struct p[3]");
        // Structs start at each element, not inside one.
        assert_eq!(a.struct_at(16), Some(&point()));
        assert_eq!(a.struct_at(8), None);
        assert_eq!(a.struct_at(48), None);
        assert_eq!(point().struct_at(0), Some(&point()));
        assert_eq!(CType::Scalar(INT).struct_at(0), None);
    }

    #[test]
    fn raw_bytes_fit_anything_and_kinds_must_agree_otherwise() {
        const CHAR: Scalar = Scalar { kind: b'r', size: 1 };
        assert!(fits(b'i', 4, INT, false));
        assert!(!fits(b'f', 8, INT, false));
        assert!(!fits(b'u', 4, INT, false));
        assert!(!fits(b'i', 8, INT, false));
        // MPI_BYTE anywhere; MPI_CHAR on bytes, or on a char member only.
        assert!(fits(b'x', 1, DOUBLE, true));
        assert!(fits(b'r', 1, INT, false));
        assert!(!fits(b'r', 1, DOUBLE, true));
        // A complex is two reals.
        assert!(fits(b'c', 16, DOUBLE, true));
        assert!(fits(b'f', 8, Scalar { kind: b'c', size: 16 }, false));
        assert!(!fits(b'c', 8, DOUBLE, false));
        // A char array is storage for anything; a char member is a char.
        assert!(fits(b'f', 8, CHAR, false));
        assert!(!fits(b'i', 4, CHAR, true));
        assert!(fits(b'r', 1, CHAR, true));
        assert!(fits(b'i', 1, CHAR, true));
        assert!(fits(b'u', 4, Scalar { kind: b'e', size: 4 }, false));
        assert!(fits(b'i', 8, Scalar { kind: b'p', size: 8 }, false));
        assert!(!fits(b'f', 8, Scalar { kind: b'p', size: 8 }, false));
    }

    #[test]
    fn opaque_parts_are_told_apart() {
        let s = pair("u", ("any", CType::Opaque(8)));
        assert!(!s.opaque_at(0));
        assert!(s.opaque_at(8));
        assert!(s.opaque_at(12));
    }
}
