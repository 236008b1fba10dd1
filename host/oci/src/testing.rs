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
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("a free port")
            .local_addr()
            .expect("its address")
            .port();
        let dir = tempfile::tempdir().expect("a temp dir");
        let storage = dir.path().join("storage");
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
            storage.display()
        );
        if !users.is_empty() {
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
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: workbooks-test\n    path: {}\n",
                file.display()
            ));
        }
        let config_file = dir.path().join("config.yml");
        std::fs::write(&config_file, config).expect("the config file");
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config_file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry (apt-get install docker-registry; .ci/run installs it)");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "docker-registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        DistributionServer { child, port, dir }
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

impl Drop for DistributionServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
