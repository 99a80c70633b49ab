//! Plain `X.Y.Z` versions, as hosts compare them, and the ranges `install` accepts.
//!
//! Hosts compare `version` and `min_cli` numerically, major.minor.patch, and the reference
//! packer rejects prerelease and build suffixes (`0.13.0-rc1`), so a [`Version`] has none.

use std::fmt;
use std::str::FromStr;

/// A validated `X.Y.Z` version without prerelease or build metadata.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(semver::Version);

/// Why a string is not a plain version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// Not `X.Y.Z` at all.
    #[error("`{0}` is not a version: write three numbers as `X.Y.Z` (e.g. `0.1.0`), without leading zeros")]
    Malformed(String),
    /// `X.Y.Z`, with a number past what hookpack (and a host) can compare.
    #[error("`{0}` has a number too large to compare; each of X, Y and Z must be at most {max}", max = u64::MAX)]
    TooLarge(String),
    /// Has a prerelease or build suffix.
    #[error("`{0}` has a prerelease or build suffix; hosts compare plain `X.Y.Z` only, so drop the suffix")]
    Suffix(String),
}

impl Version {
    /// Validates `s` as a plain version.
    pub fn parse(s: &str) -> Result<Version, VersionError> {
        let v = semver::Version::parse(s).map_err(|_| {
            let number = |n: &str| {
                n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0'))
            };
            let parts: Vec<&str> = s.split('.').collect();
            if parts.len() == 3 && parts.iter().all(|n| !n.is_empty() && number(n)) {
                VersionError::TooLarge(s.to_string())
            } else {
                VersionError::Malformed(s.to_string())
            }
        })?;
        if !v.pre.is_empty() || !v.build.is_empty() {
            return Err(VersionError::Suffix(s.to_string()));
        }
        Ok(Version(v))
    }

    /// Builds a version from its three numbers.
    pub fn new(major: u64, minor: u64, patch: u64) -> Version {
        Version(semver::Version::new(major, minor, patch))
    }

    /// The underlying semver value, for range matching.
    pub fn as_semver(&self) -> &semver::Version {
        &self.0
    }
}

impl FromStr for Version {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Version::parse(s)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl serde::Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Version::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_versions_only() {
        assert!(Version::parse("0.13.0").is_ok());
        assert!(matches!(
            Version::parse("0.13.0-rc1"),
            Err(VersionError::Suffix(_))
        ));
        assert!(matches!(
            Version::parse("1.0.0+build"),
            Err(VersionError::Suffix(_))
        ));
        for bad in ["", "1", "1.2", "01.2.3", "v1.2.3", "1.2.3.4", " 1.2.3"] {
            assert!(
                matches!(Version::parse(bad), Err(VersionError::Malformed(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_number_too_large_is_said_as_such() {
        let e = Version::parse("99999999999999999999.0.0").unwrap_err();
        assert!(matches!(e, VersionError::TooLarge(_)), "{e:?}");
        assert!(e.to_string().contains("18446744073709551615"), "{e}");
        assert!(Version::parse("18446744073709551615.0.0").is_ok());
        assert!(matches!(
            Version::parse("099999999999999999999.0.0"),
            Err(VersionError::Malformed(_))
        ));
    }

    #[test]
    fn compares_numerically() {
        assert!(Version::parse("0.10.0").unwrap() > Version::parse("0.9.9").unwrap());
    }
}
