//! The token check shared by the coordinator's gRPC interceptor and its
//! status server: one comparison, in its own module so that neither of
//! the two imports the other for it.

/// Compares the presented token with the expected one in time independent
/// of where they differ.
pub(crate) fn same_token(got: &[u8], want: &[u8]) -> bool {
    if got.len() != want.len() {
        return false;
    }
    got.iter().zip(want).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}
