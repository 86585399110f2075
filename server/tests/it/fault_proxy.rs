//! Fault injection between the service and its database, without touching
//! the database itself (other tests share the system PostgreSQL):
//!
//! - [`FaultProxy`]: a TCP proxy on 127.0.0.1 in front of a database port
//!   that can add latency, freeze one connection's requests mid-session
//!   (a client host that stopped without closing its socket), and go down — cut every connection and refuse
//!   new ones (its port is closed, so connecting fails as it does with a
//!   stopped server) — then come up again on the same port. To the service
//!   that is PostgreSQL stopped and restarted.
//! - [`PrivateCluster`]: a PostgreSQL cluster of its own (Debian's binaries,
//!   run as the `postgres` OS user) that really stops and starts.
//! - [`SmallDisk`]: a tmpfs of a few MiB that can be filled, for SQLite on
//!   a full disk.
//! - [`audit`]: the one query set that says nothing was lost or doubled.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// A TCP proxy to `upstream` with switchable faults.
pub struct FaultProxy {
    pub addr: SocketAddr,
    upstream: SocketAddr,
    shared: Arc<Shared>,
    /// The accept loop while the proxy is up; `None` while it is down.
    accepting: Mutex<Option<Accepting>>,
}

struct Shared {
    /// Added before every chunk is passed on, in each direction (ms).
    latency_ms: AtomicU64,
    /// The next request chunk containing these bytes is not passed on,
    /// nor anything after it on that connection (see
    /// [`FaultProxy::freeze_requests_at`]).
    freeze_at: Mutex<Option<Vec<u8>>>,
}

struct Accepting {
    /// Cancelled to stop accepting and cut every connection it made.
    cut: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl FaultProxy {
    /// A proxy on an ephemeral 127.0.0.1 port, up, without latency.
    pub async fn start(upstream: SocketAddr) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().unwrap();
        let proxy = FaultProxy {
            addr,
            upstream,
            shared: Arc::new(Shared {
                latency_ms: AtomicU64::new(0),
                freeze_at: Mutex::new(None),
            }),
            accepting: Mutex::new(None),
        };
        proxy.accept_on(listener);
        proxy
    }

    /// `url` with its host and port replaced by the proxy's.
    pub fn url_through(&self, url: &str) -> String {
        let scheme = url.find("://").expect("a URL") + 3;
        let rest = &url[scheme..];
        let host_start = rest.find('@').map(|at| at + 1).unwrap_or(0);
        let host_end = rest[host_start..]
            .find('/')
            .map(|i| host_start + i)
            .unwrap_or(rest.len());
        format!(
            "{}{}{}{}",
            &url[..scheme],
            &rest[..host_start],
            self.addr,
            &rest[host_end..]
        )
    }

    /// Adds `latency` before every chunk passed on, both ways.
    pub fn set_latency(&self, latency: Duration) {
        self.shared
            .latency_ms
            .store(latency.as_millis() as u64, Ordering::SeqCst);
    }

    /// The first connection to send a request chunk containing `pattern`
    /// is frozen there: that chunk and every later one from its client is
    /// held back, its socket left open both ways, as if the client's host
    /// had stopped mid-session. The server's answers still pass, and when
    /// the server closes the connection the client's side is closed too.
    pub fn freeze_requests_at(&self, pattern: &[u8]) {
        *self.shared.freeze_at.lock().unwrap() = Some(pattern.to_vec());
    }

    /// The database goes away: every connection is cut and the port
    /// closed, so new connections are refused.
    pub async fn down(&self) {
        let accepting = self.accepting.lock().unwrap().take();
        if let Some(a) = accepting {
            a.cut.cancel();
            let _ = a.task.await;
        }
    }

    /// The database is back, on the same port.
    pub async fn up(&self) {
        // The port was ours a moment ago; on a busy machine binding it
        // again may take a few tries (tokio sets SO_REUSEADDR).
        let mut tries = 0;
        let listener = loop {
            match TcpListener::bind(self.addr).await {
                Ok(l) => break l,
                Err(_) if tries < 100 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("cannot listen on {} again: {e}", self.addr),
            }
        };
        self.accept_on(listener);
    }

    fn accept_on(&self, listener: TcpListener) {
        let cut = CancellationToken::new();
        let (upstream, shared, stop) = (self.upstream, self.shared.clone(), cut.clone());
        let task = tokio::spawn(async move {
            loop {
                let client = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((c, _)) => c,
                        Err(_) => continue,
                    },
                    _ = stop.cancelled() => return,
                };
                let (shared, stop) = (shared.clone(), stop.clone());
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    let (cr, cw) = client.into_split();
                    let (sr, sw) = server.into_split();
                    // Dropping both halves of both sockets closes them: that
                    // is the cut.
                    tokio::select! {
                        _ = pipe(cr, sw, shared.clone(), true) => {}
                        _ = pipe(sr, cw, shared, false) => {}
                        _ = stop.cancelled() => {}
                    }
                });
            }
        });
        *self.accepting.lock().unwrap() = Some(Accepting { cut, task });
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if let Some(a) = self.accepting.lock().unwrap().take() {
            a.cut.cancel();
        }
    }
}

/// Copies `from` to `to`, waiting the current latency before each chunk;
/// `requests` (client to server) may freeze at the pattern set.
async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    shared: Arc<Shared>,
    requests: bool,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if requests && freezes_at(&shared, &buf[..n]) {
            // Both sockets stay open: only the other direction ending (the
            // server closing) ends this connection.
            std::future::pending::<()>().await;
        }
        let latency = shared.latency_ms.load(Ordering::SeqCst);
        if latency > 0 {
            tokio::time::sleep(Duration::from_millis(latency)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// Whether `chunk` holds the freeze pattern set; if so, the pattern is
/// spent (only one connection freezes).
fn freezes_at(shared: &Shared, chunk: &[u8]) -> bool {
    let mut freeze_at = shared.freeze_at.lock().unwrap();
    let hit = freeze_at
        .as_deref()
        .is_some_and(|p| chunk.windows(p.len()).any(|w| w == p));
    if hit {
        *freeze_at = None;
    }
    hit
}

/// A PostgreSQL cluster of its own, in a temporary directory, on a free
/// 127.0.0.1 port: stopping it disturbs no other test. Needs Debian's
/// server binaries (`/usr/lib/postgresql/*/bin`) and root (to run them as
/// the `postgres` user); [`PrivateCluster::create`] says which is missing.
pub struct PrivateCluster {
    pub port: u16,
    bin: std::path::PathBuf,
    dir: tempfile::TempDir,
}

impl PrivateCluster {
    /// initdb and start, or why that is impossible on this machine.
    pub fn create() -> Result<PrivateCluster, String> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .map_err(|e| format!("no /usr/lib/postgresql: {e}"))?
            .filter_map(|d| d.ok().map(|d| d.path().join("bin")))
            .filter(|b| b.join("pg_ctl").exists() && b.join("initdb").exists())
            .max()
            .ok_or("no initdb and pg_ctl under /usr/lib/postgresql/*/bin")?;
        let dir = tempfile::Builder::new()
            .prefix("kr-pg-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let chown = std::process::Command::new("chown")
            .arg("postgres")
            .arg(dir.path())
            .status()
            .map_err(|e| format!("chown: {e}"))?;
        if !chown.success() {
            return Err("cannot hand the cluster directory to the postgres user".into());
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cluster = PrivateCluster { port, bin, dir };
        cluster.as_postgres(&[
            "initdb",
            "-D",
            &cluster.data(),
            "-U",
            "postgres",
            "-A",
            "trust",
            "--no-sync",
        ])?;
        cluster.start()?;
        Ok(cluster)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn as_postgres(&self, args: &[&str]) -> Result<(), String> {
        let program = self.bin.join(args[0]);
        let out = std::process::Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(&program)
            .args(&args[1..])
            .output()
            .map_err(|e| format!("runuser {}: {e}", program.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{} {:?} failed: {}{}",
                program.display(),
                &args[1..],
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// Starts the server and waits until it accepts connections.
    pub fn start(&self) -> Result<(), String> {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("log").display().to_string();
        self.as_postgres(&[
            "pg_ctl",
            "-D",
            &self.data(),
            "-l",
            &log,
            "-o",
            &options,
            "-w",
            "-t",
            "120",
            "start",
        ])
    }

    /// A fast shutdown: sessions are ended, as when an operator stops it.
    pub fn stop(&self) -> Result<(), String> {
        self.as_postgres(&[
            "pg_ctl",
            "-D",
            &self.data(),
            "-m",
            "fast",
            "-w",
            "-t",
            "120",
            "stop",
        ])
    }

    pub fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let _ = self.as_postgres(&["pg_ctl", "-D", &self.data(), "-m", "immediate", "stop"]);
    }
}

/// A tmpfs of `size` mounted on a temporary directory, that a test can
/// fill to the last byte; unmounted when dropped. Needs root (CI runs as
/// root on this machine); [`SmallDisk::mount`] says why when it cannot.
pub struct SmallDisk {
    dir: Option<tempfile::TempDir>,
}

impl SmallDisk {
    pub fn mount(size: &str) -> Result<SmallDisk, String> {
        let dir = tempfile::Builder::new()
            .prefix("kr-disk-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs failed (this test needs root): {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(SmallDisk { dir: Some(dir) })
    }

    pub fn path(&self) -> &std::path::Path {
        self.dir.as_ref().unwrap().path()
    }

    /// Writes a filler file until the disk refuses another byte.
    pub fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.filler()).expect("create the filler");
        let block = vec![0xa5u8; 64 * 1024];
        loop {
            if f.write_all(&block).is_err() {
                break;
            }
        }
        // Whatever is left is smaller than a block: a byte at a time.
        while f.write_all(&[0]).is_ok() {}
        let _ = f.sync_all();
    }

    /// Frees what [`SmallDisk::fill`] took.
    pub fn free(&self) {
        std::fs::remove_file(self.filler()).expect("remove the filler");
    }

    fn filler(&self) -> std::path::PathBuf {
        self.path().join("filler")
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(dir.path())
                .status();
            drop(dir);
        }
    }
}

/// What the audit found wrong; empty when nothing was lost or doubled.
/// Checked over every route in the database:
/// - every attempt, schedule and dispatch belongs to a route;
/// - a route's attempts are numbered 1, 2, 3… without gaps, their
///   generations strictly increase and none is ahead of the route;
/// - at most one dispatch per route and generation (a schedule fires once),
///   and an open (pending or claimed) one only at the route's generation;
/// - at most one armed schedule per route, and none for a route that moved
///   on (generation) — a timer that could not be persisted was never armed,
///   one that was is still there or fired.
pub async fn audit(url: &str) -> Vec<String> {
    let checks: [(&str, &str); 9] = [
        (
            "attempts of no route",
            "SELECT COUNT(*) FROM attempts a WHERE NOT EXISTS (SELECT 1 FROM routes r WHERE r.id = a.route_id)",
        ),
        (
            "schedules of no route",
            "SELECT COUNT(*) FROM schedules s WHERE NOT EXISTS (SELECT 1 FROM routes r WHERE r.id = s.route_id)",
        ),
        (
            "dispatches of no route",
            "SELECT COUNT(*) FROM dispatches d WHERE NOT EXISTS (SELECT 1 FROM routes r WHERE r.id = d.route_id)",
        ),
        (
            "routes whose attempts are not numbered 1..n",
            "SELECT COUNT(*) FROM (SELECT route_id FROM attempts GROUP BY route_id \
             HAVING MIN(seq) <> 1 OR MAX(seq) <> COUNT(*)) x",
        ),
        (
            "attempts whose generation does not increase with seq, or is ahead of the route",
            "SELECT COUNT(*) FROM attempts a WHERE EXISTS (SELECT 1 FROM attempts b \
             WHERE b.route_id = a.route_id AND b.seq > a.seq AND b.generation <= a.generation) \
             OR a.generation > (SELECT r.generation FROM routes r WHERE r.id = a.route_id)",
        ),
        (
            "route generations with more than one dispatch",
            "SELECT COUNT(*) FROM (SELECT route_id, generation FROM dispatches \
             GROUP BY route_id, generation HAVING COUNT(*) > 1) x",
        ),
        (
            "open dispatches of a route that moved on",
            "SELECT COUNT(*) FROM dispatches d JOIN routes r ON r.id = d.route_id \
             WHERE d.state IN ('pending', 'claimed') AND d.generation <> r.generation",
        ),
        (
            "routes with more than one armed schedule",
            "SELECT COUNT(*) FROM (SELECT route_id FROM schedules WHERE state = 'armed' \
             GROUP BY route_id HAVING COUNT(*) > 1) x",
        ),
        (
            "armed schedules of a route that moved on",
            "SELECT COUNT(*) FROM schedules s JOIN routes r ON r.id = s.route_id \
             WHERE s.state = 'armed' AND s.generation <> r.generation",
        ),
    ];
    let mut db = Db::open(url).await;
    let mut problems = Vec::new();
    for (what, sql) in checks {
        let n = db.scalar(sql).await;
        if n != 0 {
            problems.push(format!("{n} {what}"));
        }
    }
    problems
}

/// A direct connection to a test database, of whichever engine its URL
/// names, for counting rows behind the service's back.
pub enum Db {
    Sqlite(sqlx::SqliteConnection),
    Postgres(sqlx::PgConnection),
}

impl Db {
    pub async fn open(url: &str) -> Db {
        use sqlx::Connection;
        if url.starts_with("sqlite:") {
            Db::Sqlite(
                sqlx::SqliteConnection::connect(url)
                    .await
                    .expect("open SQLite"),
            )
        } else {
            Db::Postgres(
                sqlx::PgConnection::connect(url)
                    .await
                    .expect("open PostgreSQL"),
            )
        }
    }

    /// The one integer `sql` answers.
    pub async fn scalar(&mut self, sql: &str) -> i64 {
        match self {
            Db::Sqlite(c) => sqlx::query_scalar(sql).fetch_one(c).await,
            Db::Postgres(c) => sqlx::query_scalar(sql).fetch_one(c).await,
        }
        .unwrap_or_else(|e| panic!("`{sql}`: {e}"))
    }
}
