//! Which server the doctor looks at: the one `SAYSO_URL` names, and only when it runs as the
//! hook's own user. The URL's host is resolved to this machine's own addresses; the kernel's
//! table of listening TCP sockets (`/proc/net/tcp`, `tcp6`, which names each socket's owner)
//! says whether one listens on its port, and whose it is; among this user's processes (the
//! `/proc/<pid>` folders it owns) the one holding that socket is the server. A socket of
//! another user ends the search there: nothing of another user's is opened or printed.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

/// Where the URL's server is, as this user may know it.
#[derive(Debug, Clone, PartialEq)]
pub enum Served {
    /// The URL names another machine, or a name that does not resolve.
    Elsewhere,
    /// It names this machine, and nothing listens on its port.
    NotListening,
    /// Another user's socket listens there.
    OtherUser,
    /// A socket of this user listens there, held by these of its processes (none found when
    /// they are out of sight, in another PID namespace say).
    ThisUser(Vec<u32>),
}

/// The server `url` names, as seen from this machine by the user `uid`.
pub async fn served(url: &str, uid: u32) -> Served {
    let Some((addrs, port)) = local_addresses(url).await else {
        return Served::Elsewhere;
    };
    served_from(Path::new("/proc"), &addrs, port, uid)
}

/// `served` on a given `/proc` and addresses, for the tests.
pub fn served_from(proc: &Path, addrs: &[IpAddr], port: u16, uid: u32) -> Served {
    let sockets: Vec<Socket> = ["net/tcp", "net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(proc.join(f)).ok())
        .flat_map(|text| listening(&text))
        .filter(|s| s.port == port && (s.addr.is_unspecified() || addrs.contains(&s.addr)))
        .collect();
    if sockets.is_empty() {
        return Served::NotListening;
    }
    let mine: HashSet<u64> = sockets
        .iter()
        .filter(|s| s.uid == uid)
        .map(|s| s.inode)
        .collect();
    if mine.is_empty() {
        return Served::OtherUser;
    }
    Served::ThisUser(holders(proc, &mine, uid))
}

/// The addresses of this machine that `url`'s host resolves to, and its port; `None` when it
/// resolves to none of them.
async fn local_addresses(url: &str) -> Option<(Vec<IpAddr>, u16)> {
    let url = url::Url::parse(url).ok()?;
    let port = url.port_or_known_default()?;
    let ips: Vec<IpAddr> = match url.host()? {
        url::Host::Ipv4(ip) => vec![IpAddr::V4(ip)],
        url::Host::Ipv6(ip) => vec![IpAddr::V6(ip)],
        url::Host::Domain(name) => {
            let lookup = tokio::net::lookup_host((name.to_string(), port));
            match tokio::time::timeout(Duration::from_secs(3), lookup).await {
                Ok(Ok(found)) => found.map(|a| a.ip()).collect(),
                _ => return None,
            }
        }
    };
    let local: Vec<IpAddr> = ips
        .into_iter()
        .map(plain)
        // Binding succeeds only to an address this machine has.
        .filter(|ip| UdpSocket::bind(SocketAddr::new(*ip, 0)).is_ok())
        .collect();
    (!local.is_empty()).then_some((local, port))
}

/// An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) as the IPv4 address it is.
fn plain(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

/// One listening socket of the kernel's table.
#[derive(Debug, Clone, PartialEq)]
struct Socket {
    addr: IpAddr,
    port: u16,
    uid: u32,
    inode: u64,
}

/// The listening sockets of a `/proc/net/tcp` or `tcp6` table.
fn listening(table: &str) -> Vec<Socket> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            if f.len() < 10 || f[3] != "0A" {
                return None;
            }
            let (addr, port) = endpoint(f[1])?;
            Some(Socket {
                addr,
                port,
                uid: f[7].parse().ok()?,
                inode: f[9].parse().ok()?,
            })
        })
        .collect()
}

/// `0100007F:1F90` as 127.0.0.1 and 8080: the address is the kernel's words in this
/// machine's byte order, the port a plain hexadecimal number.
fn endpoint(text: &str) -> Option<(IpAddr, u16)> {
    let (addr, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| {
        addr.get(i * 8..i * 8 + 8)
            .and_then(|w| u32::from_str_radix(w, 16).ok())
            .map(u32::to_ne_bytes)
    };
    let ip = match addr.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some((plain(ip), port))
}

/// The processes of `uid` holding one of the `sockets`: only its own `/proc/<pid>` folders
/// are opened.
fn holders(proc: &Path, sockets: &HashSet<u64>, uid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(proc) else {
        return vec![];
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if !entry.metadata().is_ok_and(|m| m.uid() == uid) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|l| {
                l.to_str()
                    .and_then(|l| l.strip_prefix("socket:["))
                    .and_then(|l| l.strip_suffix(']'))
                    .and_then(|n| n.parse::<u64>().ok())
                    .is_some_and(|n| sockets.contains(&n))
            })
        });
        if holds {
            found.push(pid);
        }
    }
    found.sort_unstable();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0000000000000000 100 0 0 10 0
   1: 00000000:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000  2000        0 222 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 333 1 0000000000000000 100 0 0 10 0
";
    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F92 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 444 1 0000000000000000 100 0 0 10 0
";

    /// A `/proc` of its own: the tables, and a process of uid `me` (this test's own uid, so
    /// the folders it makes are "its") holding socket 111.
    fn fake_proc() -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("sayso-listener-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(p.join("net")).unwrap();
        std::fs::write(p.join("net/tcp"), TCP).unwrap();
        std::fs::write(p.join("net/tcp6"), TCP6).unwrap();
        std::fs::create_dir_all(p.join("42/fd")).unwrap();
        std::os::unix::fs::symlink("socket:[111]", p.join("42/fd/3")).unwrap();
        std::os::unix::fs::symlink("/dev/null", p.join("42/fd/0")).unwrap();
        p
    }

    #[test]
    fn the_kernels_table_is_read_in_its_byte_order() {
        let s = listening(TCP);
        assert_eq!(s.len(), 2, "a connection is not a listener: {s:?}");
        assert_eq!(
            (s[0].addr, s[0].port, s[0].uid, s[0].inode),
            (IpAddr::V4(Ipv4Addr::LOCALHOST), 8080, 1000, 111)
        );
        assert!(s[1].addr.is_unspecified());
        let s6 = listening(TCP6);
        assert_eq!(
            (s6[0].addr, s6[0].port),
            (IpAddr::V6(Ipv6Addr::LOCALHOST), 8082)
        );
    }

    #[test]
    fn only_this_users_socket_on_the_urls_port_leads_to_a_process() {
        let proc = fake_proc();
        let me = std::fs::metadata(proc.join("42")).unwrap().uid();
        let lo = [IpAddr::V4(Ipv4Addr::LOCALHOST)];
        // Port 8080 on loopback: a socket of uid 1000.
        let want = if me == 1000 {
            Served::ThisUser(vec![42])
        } else {
            Served::OtherUser
        };
        assert_eq!(served_from(&proc, &lo, 8080, me), want);
        // As uid 1000 itself, the process is found only if its folder is 1000's.
        match served_from(&proc, &lo, 8080, 1000) {
            Served::ThisUser(pids) => assert_eq!(pids.is_empty(), me != 1000),
            other => panic!("{other:?}"),
        }
        // 8081 listens on every address, as uid 2000: another user's.
        assert_eq!(served_from(&proc, &lo, 8081, 1000), Served::OtherUser);
        // Nothing on 9000; 8082 is on ::1 only, not 127.0.0.1.
        assert_eq!(served_from(&proc, &lo, 9000, 1000), Served::NotListening);
        assert_eq!(served_from(&proc, &lo, 8082, 1000), Served::NotListening);
        std::fs::remove_dir_all(proc).unwrap();
    }

    #[tokio::test]
    async fn a_url_of_another_machine_is_not_looked_for_here() {
        assert_eq!(
            local_addresses("http://127.0.0.1:8080").await,
            Some((vec![IpAddr::V4(Ipv4Addr::LOCALHOST)], 8080))
        );
        // TEST-NET-3: no machine has it.
        assert_eq!(local_addresses("https://203.0.113.9").await, None);
        assert_eq!(local_addresses("not a url").await, None);
    }
}
