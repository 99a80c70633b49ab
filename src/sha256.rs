//! SHA-256 digests as the catalog writes them: 64 lowercase hex characters.

use sha2::Digest as _;
use std::fmt;
use std::io::{self, Read};

/// A validated SHA-256 digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sha256([u8; 32]);

/// Why a string is not a digest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a sha256: write 64 lowercase hex characters")]
pub struct Sha256Error(pub String);

impl Sha256 {
    /// Validates `s`: exactly 64 characters of `0-9a-f`.
    pub fn parse(s: &str) -> Result<Sha256, Sha256Error> {
        let bytes = s.as_bytes();
        if bytes.len() != 64
            || !bytes
                .iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        {
            return Err(Sha256Error(s.to_string()));
        }
        let mut out = [0u8; 32];
        for (i, pair) in bytes.chunks(2).enumerate() {
            let hi = (pair[0] as char).to_digit(16).unwrap_or(0);
            let lo = (pair[1] as char).to_digit(16).unwrap_or(0);
            out[i] = (hi * 16 + lo) as u8;
        }
        Ok(Sha256(out))
    }

    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Sha256 {
        Sha256(sha2::Sha256::digest(bytes).into())
    }

    /// The digest of everything `reader` yields, and how many bytes that was.
    pub fn of_reader(mut reader: impl Read) -> io::Result<(Sha256, u64)> {
        let mut hasher = sha2::Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut total = 0u64;
        loop {
            let n = reader.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            total += n as u64;
        }
        Ok((Sha256(hasher.finalize().into()), total))
    }

    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl From<[u8; 32]> for Sha256 {
    fn from(b: [u8; 32]) -> Self {
        Sha256(b)
    }
}

impl fmt::Display for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl serde::Serialize for Sha256 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Sha256 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Sha256::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_uppercase() {
        let d = Sha256::of(b"abc");
        let s = d.to_string();
        assert_eq!(
            s,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Sha256::parse(&s).unwrap(), d);
        assert!(Sha256::parse(&s.to_uppercase()).is_err());
        assert!(Sha256::parse(&s[..63]).is_err());
    }
}
