//! The identity of a code object: a content hash of its bytes.
//!
//! The soft HSA runtime keys the host builds of kernels by (code object, symbol), so two code
//! objects that both define `saxpy.kd` never share an implementation unless both were registered.
//! Registration (the builtins, the demo, tests) and lookup (the soft runtime's loader) hash in the
//! same process, so std's SipHash with its fixed default keys is enough: the value never leaves
//! the process and is not a security boundary (whoever can register a kernel can already run code).

use core::fmt;
use core::hash::Hasher;
use std::hash::DefaultHasher;

/// A content hash of a code object's bytes. Displayed as 16 hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodeObjectId(pub u64);

impl CodeObjectId {
    /// The identity of `bytes`: the one hashing function used on both sides of the registry.
    pub fn of(bytes: &[u8]) -> CodeObjectId {
        let mut hasher = DefaultHasher::new();
        // Length first, so no byte string is a hash-prefix of another.
        hasher.write_usize(bytes.len());
        hasher.write(bytes);
        CodeObjectId(hasher.finish())
    }
}

impl fmt::Display for CodeObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_bytes_hash_equal_and_one_changed_byte_does_not() {
        let bytes: Vec<u8> = (0..4096u32).map(|value| (value * 7) as u8).collect();
        assert_eq!(CodeObjectId::of(&bytes), CodeObjectId::of(&bytes.clone()));
        let mut changed = bytes.clone();
        changed[2048] ^= 1;
        assert_ne!(CodeObjectId::of(&bytes), CodeObjectId::of(&changed));
        assert_ne!(CodeObjectId::of(&bytes), CodeObjectId::of(&bytes[..4095]));
        assert_eq!(CodeObjectId(0xab).to_string(), "00000000000000ab");
    }
}
