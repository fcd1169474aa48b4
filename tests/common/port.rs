//! Ports for servers a test starts on an address it names itself.

use std::net::TcpListener;

/// A loopback port free at the moment of asking (bound, then let go): nothing listens on
/// it until the test starts something there.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}
