//! Caddy and nginx, each running the file of deploy/ as an operator would, on loopback ports
//! in a folder of the test's own.
//!
//! Caddy reads deploy/Caddyfile unchanged: the domain and upstream come from its environment
//! placeholders, and the test's own top-level file only sets global options around an
//! `import` of it (`local_certs` is `tls internal` for every site; no admin endpoint, ports of
//! the test's own, no root certificate installed into the system). nginx reads a copy of
//! deploy/nginx.conf in which only the listen addresses, the upstream address, the
//! certificate's folder and the web root are replaced, each of which must be found exactly
//! once, so a changed file cannot slip past the test unnoticed.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

use super::stack::{DOMAIN, deploy_file, free_port};

/// A log file in `dir` for a child's stdout and stderr.
fn log_file(dir: &Path, name: &str) -> (Stdio, Stdio) {
    let file = std::fs::File::create(dir.join(name)).expect("log file");
    (file.try_clone().unwrap().into(), file.into())
}

/// Caddy on `https_port`, in front of sayso at `upstream`.
pub fn start_caddy(caddy: &Path, dir: &Path, https_port: u16, upstream: SocketAddr) -> Child {
    let config = dir.join("Caddyfile");
    let global = format!(
        "{{\n\tadmin off\n\tlocal_certs\n\tskip_install_trust\n\thttp_port {}\n\thttps_port {}\n}}\n\
         import {}\n",
        free_port(),
        https_port,
        deploy_file("Caddyfile").display()
    );
    std::fs::write(&config, global).unwrap();
    let (out, err) = log_file(dir, "caddy.log");
    Command::new(caddy)
        .args(["run", "--adapter", "caddyfile", "--config"])
        .arg(&config)
        .env("SAYSO_DOMAIN", DOMAIN)
        .env("SAYSO_UPSTREAM", upstream.to_string())
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .kill_on_drop(true)
        .spawn()
        .expect("caddy starts")
}

/// The root certificate of Caddy's local authority (made on its first start).
pub async fn caddy_root(dir: &Path) -> Vec<u8> {
    let root = dir.join("data/caddy/pki/authorities/local/root.crt");
    wait_for_file(&root, dir.join("caddy.log")).await
}

/// A self-signed certificate for the domain, where certbot would put it:
/// `DIR/cert/fullchain.pem` and `privkey.pem`. Returns the certificate.
pub async fn self_signed(openssl: &Path, dir: &Path) -> Vec<u8> {
    let certs = dir.join("cert");
    std::fs::create_dir_all(&certs).unwrap();
    let status = Command::new(openssl)
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "2", "-subj", &format!("/CN={DOMAIN}")])
        .args(["-addext", &format!("subjectAltName=DNS:{DOMAIN}")])
        // A certificate that is its own trust anchor but not a CA: rustls refuses a CA
        // certificate as a server's.
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .args(["-addext", "extendedKeyUsage=serverAuth"])
        .arg("-keyout")
        .arg(certs.join("privkey.pem"))
        .arg("-out")
        .arg(certs.join("fullchain.pem"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .expect("openssl runs");
    assert!(status.success(), "openssl made no certificate");
    std::fs::read(certs.join("fullchain.pem")).unwrap()
}

/// deploy/nginx.conf with the test's addresses: every replacement must match exactly once.
pub fn nginx_server_block(dir: &Path, https_port: u16, upstream: SocketAddr) -> String {
    let http_port = free_port();
    let ipv6 = std::net::TcpListener::bind("[::1]:0").is_ok();
    let v6 = |port: u16, rest: &str| {
        if ipv6 {
            format!("listen [::1]:{port}{rest}")
        } else {
            // A host without IPv6 loopback: the line is left out, nothing else changes.
            format!("# (no IPv6 loopback here) listen [::1]:{port}{rest}")
        }
    };
    let replacements = [
        (
            "server 127.0.0.1:8080;".to_string(),
            format!("server {upstream};"),
        ),
        (
            "listen 80;".to_string(),
            format!("listen 127.0.0.1:{http_port};"),
        ),
        ("listen [::]:80;".to_string(), v6(http_port, ";")),
        (
            "listen 443 ssl http2;".to_string(),
            format!("listen 127.0.0.1:{https_port} ssl http2;"),
        ),
        (
            "listen [::]:443 ssl http2;".to_string(),
            v6(https_port, " ssl http2;"),
        ),
        (
            format!("/etc/letsencrypt/live/{DOMAIN}/fullchain.pem"),
            dir.join("cert/fullchain.pem").display().to_string(),
        ),
        (
            format!("/etc/letsencrypt/live/{DOMAIN}/privkey.pem"),
            dir.join("cert/privkey.pem").display().to_string(),
        ),
        (
            "root /var/www/html;".to_string(),
            format!("root {};", dir.join("www").display()),
        ),
    ];
    let mut conf = std::fs::read_to_string(deploy_file("nginx.conf")).unwrap();
    for (from, to) in &replacements {
        let found = conf.matches(from.as_str()).count();
        assert_eq!(
            found, 1,
            "deploy/nginx.conf should have {from:?} once: update the test's replacements"
        );
        conf = conf.replace(from.as_str(), to);
    }
    conf
}

/// nginx on `https_port`, in front of sayso at `upstream`, in the foreground: one process
/// (no workers to outlive it), its pid, logs and temporary files in `dir`.
pub fn start_nginx(nginx: &Path, dir: &Path, https_port: u16, upstream: SocketAddr) -> Child {
    std::fs::write(
        dir.join("sayso.conf"),
        nginx_server_block(dir, https_port, upstream),
    )
    .unwrap();
    let d = dir.display();
    let main = format!(
        "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log info;\n\
         events {{ worker_connections 512; }}\n\
         http {{\n\
         access_log {d}/access.log;\n\
         client_body_temp_path {d}/body;\nproxy_temp_path {d}/proxy;\n\
         fastcgi_temp_path {d}/fastcgi;\nuwsgi_temp_path {d}/uwsgi;\nscgi_temp_path {d}/scgi;\n\
         include {d}/sayso.conf;\n}}\n"
    );
    std::fs::write(dir.join("nginx.conf"), main).unwrap();
    let (out, err) = log_file(dir, "nginx.out");
    Command::new(nginx)
        .arg("-p")
        .arg(format!("{d}/"))
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .arg("-e")
        .arg(dir.join("error.log"))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .kill_on_drop(true)
        .spawn()
        .expect("nginx starts")
}

/// The contents of `file` once it exists; the proxy's `log` is shown if it never does.
async fn wait_for_file(file: &Path, log: PathBuf) -> Vec<u8> {
    let started = Instant::now();
    loop {
        if let Ok(bytes) = std::fs::read(file)
            && !bytes.is_empty()
        {
            return bytes;
        }
        if started.elapsed() > Duration::from_secs(30) {
            panic!(
                "{} did not appear; the proxy's log:\n{}",
                file.display(),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
