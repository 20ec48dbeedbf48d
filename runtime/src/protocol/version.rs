//! Protocol versions and the two protocol eras.

use std::fmt;

/// A protocol version this crate knows, ordered by release.
///
/// Versions are compared by position in the list of known versions, never as strings.
///
/// ```
/// use mcp_resolve_runtime::protocol::{Era, ProtocolVersion};
///
/// let v = ProtocolVersion::parse("2025-06-18").unwrap();
/// assert_eq!(v.era(), Era::Handshake);
/// assert!(v < ProtocolVersion::V2026_07_28);
/// assert_eq!(ProtocolVersion::parse("2027-01-01"), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// `2024-11-05`
    V2024_11_05,
    /// `2025-03-26`
    V2025_03_26,
    /// `2025-06-18`
    V2025_06_18,
    /// `2025-11-25`, the latest handshake-era version.
    V2025_11_25,
    /// `2026-07-28`, the stateless era.
    V2026_07_28,
}

/// The protocol era a request belongs to.
///
/// ```
/// use mcp_resolve_runtime::protocol::{Era, ProtocolVersion};
/// assert_eq!(ProtocolVersion::V2026_07_28.era(), Era::Stateless);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2024-11-05 … 2025-11-25: `initialize` handshake, server-to-client requests on a back-channel.
    Handshake,
    /// 2026-07-28 and later: every request carries its own `_meta` envelope; questions travel as
    /// `InputRequiredResult` and retries.
    Stateless,
}

impl ProtocolVersion {
    /// Every version this crate knows, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];
    /// The newest handshake-era version; the answer to an `initialize` offering a version we do not know.
    pub const LATEST_HANDSHAKE: ProtocolVersion = Self::V2025_11_25;
    /// The newest stateless-era version.
    pub const LATEST_STATELESS: ProtocolVersion = Self::V2026_07_28;

    /// Parses a version string; unknown strings give `None`.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The version string on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Whether `initialize` agrees to this version when a client offers it. Stateless versions
    /// have no handshake, and 2025-03-26 requires JSON-RPC batches, which this crate does not
    /// take (they were dropped again in 2025-06-18): a client offering either is answered with
    /// [`ProtocolVersion::LATEST_HANDSHAKE`], and may go on with it or disconnect.
    ///
    /// ```
    /// use mcp_resolve_runtime::protocol::ProtocolVersion;
    /// assert!(ProtocolVersion::V2025_06_18.agreeable());
    /// assert!(!ProtocolVersion::V2025_03_26.agreeable());
    /// ```
    pub const fn agreeable(self) -> bool {
        matches!(self, Self::V2024_11_05 | Self::V2025_06_18 | Self::V2025_11_25)
    }

    /// The era this version belongs to.
    pub const fn era(self) -> Era {
        match self {
            Self::V2026_07_28 => Era::Stateless,
            _ => Era::Handshake,
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The stateless versions a server answers on enveloped requests.
pub(crate) const SUPPORTED_STATELESS: &[&str] = &["2026-07-28"];

/// [`SUPPORTED_STATELESS`], as a list.
pub(crate) fn supported_stateless() -> Vec<&'static str> {
    SUPPORTED_STATELESS.to_vec()
}

/// Every version this server serves, newest first: the stateless ones, then the handshake-era
/// ones `initialize` agrees to. What `server/discover` and -32022 list (2026-07-28 versioning:
/// the error MUST list "the versions it does support"), so a dual-era client learns it may fall
/// back to the handshake.
pub(crate) const SUPPORTED: &[&str] = &["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_supported_list_is_every_stateless_version() {
        let stateless: Vec<&str> = ProtocolVersion::ALL
            .iter()
            .filter(|v| v.era() == Era::Stateless)
            .map(|v| v.as_str())
            .collect();
        assert_eq!(stateless, SUPPORTED_STATELESS);
    }

    #[test]
    fn the_supported_list_is_every_version_served_newest_first() {
        let mut served: Vec<&str> = ProtocolVersion::ALL
            .iter()
            .filter(|v| v.era() == Era::Stateless || v.agreeable())
            .map(|v| v.as_str())
            .collect();
        served.reverse();
        assert_eq!(served, SUPPORTED);
    }
}
