//! The gateway start reference (audit-events.md §1.1).
//!
//! Owns: producing the 32 lowercase hexadecimal characters fixed once per process: 16 hex digits of the
//! microseconds since the Unix epoch at process start, then 16 hex digits of 8 bytes from the operating
//! system's secure random source (`rand::rngs::OsRng`, rand 0.9, which reads `getrandom(2)` or its
//! platform equivalent). Does not own: where the reference is written (the `owner` file of R-LOCK, event
//! file names).
//!
//! "At process start" is the first call of [`start_ref`]; `main` makes it before stage 0, so the two
//! coincide to within the argument parsing.

use std::fmt;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use nix::errno::Errno;
use rand::rngs::OsRng;
use rand::TryRngCore;

use super::error::{Op, Result, StorageError};

/// A gateway start reference: exactly 32 lowercase hexadecimal ASCII bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct StartRef {
    hex: [u8; 32],
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl StartRef {
    /// The reference for `micros` microseconds since the epoch and 8 `random` bytes.
    pub fn from_parts(micros: u64, random: [u8; 8]) -> StartRef {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&micros.to_be_bytes());
        bytes[8..].copy_from_slice(&random);
        let mut hex = [0u8; 32];
        for (pair, byte) in hex.chunks_exact_mut(2).zip(bytes) {
            pair[0] = HEX[usize::from(byte >> 4)];
            pair[1] = HEX[usize::from(byte & 0x0f)];
        }
        StartRef { hex }
    }

    /// Generates a fresh reference from the real-time clock and the OS secure random source.
    pub fn generate(now: SystemTime) -> Result<StartRef> {
        let since =
            now.duration_since(UNIX_EPOCH).map_err(|_| StorageError::io(Op::Entropy, Errno::EINVAL))?;
        let micros =
            u64::try_from(since.as_micros()).map_err(|_| StorageError::io(Op::Entropy, Errno::EOVERFLOW))?;
        let mut random = [0u8; 8];
        OsRng.try_fill_bytes(&mut random).map_err(|e| {
            let errno = e.raw_os_error().map(Errno::from_raw).unwrap_or(Errno::EIO);
            StorageError::io(Op::Entropy, errno)
        })?;
        Ok(StartRef::from_parts(micros, random))
    }

    /// The 32 characters.
    pub fn as_str(&self) -> &str {
        // Only ASCII hex digits are ever stored.
        std::str::from_utf8(&self.hex).unwrap_or("")
    }
}

impl fmt::Display for StartRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for StartRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StartRef({})", self.as_str())
    }
}

static START_REF: OnceLock<StartRef> = OnceLock::new();

/// This process's start reference, generated at the first call and fixed for the process lifetime.
/// Fails only if the clock is before the epoch or the random source is unavailable; a later call retries.
pub fn start_ref() -> Result<StartRef> {
    if let Some(r) = START_REF.get() {
        return Ok(*r);
    }
    let fresh = StartRef::generate(SystemTime::now())?;
    // A concurrent first call may have won; everyone gets the winner.
    Ok(*START_REF.get_or_init(|| fresh))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn vectors() {
        let table: [(u64, [u8; 8], &str); 3] = [
            (0, [0; 8], "00000000000000000000000000000000"),
            (
                0x5f3a9c2b1e0d4000,
                [0x7c, 0x1e, 0x9a, 0x3b, 0x5d, 0x2f, 0x6e, 0x81],
                "5f3a9c2b1e0d40007c1e9a3b5d2f6e81",
            ),
            (u64::MAX, [0xff; 8], "ffffffffffffffffffffffffffffffff"),
        ];
        for (micros, random, hex) in table {
            assert_eq!(StartRef::from_parts(micros, random).as_str(), hex);
        }
    }

    #[test]
    fn generated_reference_encodes_the_time_and_is_fixed_per_process() {
        let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as u64;
        let r = StartRef::generate(SystemTime::now()).unwrap();
        let after = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as u64;
        let s = r.as_str();
        assert_eq!(s.len(), 32);
        assert!(s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{s}");
        let micros = u64::from_str_radix(&s[..16], 16).unwrap();
        assert!((before..=after).contains(&micros));
        assert_eq!(start_ref().unwrap(), start_ref().unwrap());
    }

    #[test]
    fn clock_before_the_epoch_is_an_error() {
        let t = UNIX_EPOCH - Duration::from_secs(1);
        assert_eq!(StartRef::generate(t).unwrap_err(), StorageError::io(Op::Entropy, Errno::EINVAL));
    }
}
