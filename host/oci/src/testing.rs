//! A CNCF distribution server (Debian's `docker-registry`, 2.8) on a free
//! loopback port with its own storage folder, stopped on drop. Tests use it
//! as a real registry; its storage is theirs to tamper with.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running registry.
pub struct DistributionServer {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    dir: tempfile::TempDir,
}

impl DistributionServer {
    /// Anonymous push and pull.
    pub fn start() -> DistributionServer {
        Self::start_with(&[])
    }

    /// Requiring one of `users` (name, password) for every request,
    /// through an htpasswd file (bcrypt, made by `htpasswd -B`).
    pub fn start_with(users: &[(&str, &str)]) -> DistributionServer {
        let dir = tempfile::tempdir().expect("a temp dir");
        let htpasswd = (!users.is_empty()).then(|| {
            let mut lines = String::new();
            for (user, password) in users {
                let out = Command::new("htpasswd")
                    .args(["-Bbn", user, password])
                    .output()
                    .expect("htpasswd (apt-get install apache2-utils; .ci/run installs it)");
                assert!(out.status.success(), "htpasswd failed");
                lines.push_str(String::from_utf8_lossy(&out.stdout).trim());
                lines.push('\n');
            }
            let file = dir.path().join("htpasswd");
            std::fs::write(&file, lines).expect("the htpasswd file");
            file
        });
        // A port found free may be taken before the registry binds it (by
        // another test's listener): a registry that exited, or a port that
        // answers as something else, is started again on another port.
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .expect("a free port")
                .local_addr()
                .expect("its address")
                .port();
            let mut config = format!(
                "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
                dir.path().join("storage").display()
            );
            if let Some(file) = &htpasswd {
                config.push_str(&format!(
                    "auth:\n  htpasswd:\n    realm: workbooks-test\n    path: {}\n",
                    file.display()
                ));
            }
            let config_file = dir.path().join("config.yml");
            std::fs::write(&config_file, config).expect("the config file");
            let mut child = Command::new("docker-registry")
                .arg("serve")
                .arg(&config_file)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("docker-registry (apt-get install docker-registry; .ci/run installs it)");
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
                if answers_as_registry(port) {
                    return DistributionServer { child, port, dir };
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("docker-registry did not start on a free loopback port in 5 tries");
    }

    /// `127.0.0.1:PORT`.
    pub fn registry(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `oci://127.0.0.1:PORT/<rest>`.
    pub fn reference(&self, rest: &str) -> String {
        format!("oci://{}/{rest}", self.registry())
    }

    /// Where the registry keeps the blob `sha256:<hex>`.
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.dir
            .path()
            .join("storage/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

/// Whether `127.0.0.1:port` answers `/v2/` as a distribution server
/// (its API version header, with or without credentials).
fn answers_as_registry(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /v2/ HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 1024];
    let n = s.read(&mut head).unwrap_or(0);
    String::from_utf8_lossy(&head[..n])
        .to_ascii_lowercase()
        .contains("docker-distribution-api-version")
}

impl Drop for DistributionServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
