//! The client's half: send the request, read the answer, then pump stdin
//! (once asked), stdout, stderr and the exit code between the terminal and
//! the daemon. ("Relay" is the container-tier child's calls to its parent,
//! in the engine; this is not that.)

use crate::frames::{self, lock, read_frame, write_frame};
use crate::request::Request;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The exit code of a line whose daemon went away mid-line (the engine's
/// own failure code).
pub const ENGINE_EXIT: u8 = 125;

/// The daemon's answer to a request.
pub enum Answer {
    /// The line is the daemon's: pump it.
    Accepted {
        /// The socket's read half.
        reader: UnixStream,
        /// The socket's write half, shared with the stdin pump.
        writer: Arc<Mutex<UnixStream>>,
    },
    /// Run the line elsewhere; why.
    Refused(String),
}

/// Sends `request` on `stream` and reads the daemon's answer.
pub fn open(stream: UnixStream, request: &Request) -> io::Result<Answer> {
    let mut reader = stream.try_clone()?;
    let writer = Arc::new(Mutex::new(stream));
    let json = serde_json::to_vec(request).map_err(io::Error::other)?;
    write_frame(&mut *lock(&writer), frames::REQUEST, &json)?;
    match read_frame(&mut reader)? {
        (frames::ACCEPTED, _) => Ok(Answer::Accepted { reader, writer }),
        (frames::REFUSED, why) => Ok(Answer::Refused(String::from_utf8_lossy(&why).into())),
        (tag, _) => Ok(Answer::Refused(format!("an answer tagged {tag:#04x}"))),
    }
}

/// Pumps an accepted line's frames until its exit code, which it
/// returns; `bin` starts the message when the daemon goes away mid-line
/// (exit [`ENGINE_EXIT`], never a second run).
pub fn pump(mut reader: UnixStream, writer: &Arc<Mutex<UnixStream>>, bin: &str) -> u8 {
    let mut stdout = io::stdout().lock();
    let mut stdout_open = true;
    let mut stdin_sent = false;
    loop {
        match read_frame(&mut reader) {
            Ok((frames::WANT_STDIN, _)) if !stdin_sent => {
                stdin_sent = true;
                send_stdin(writer.clone(), bin.to_string());
            }
            Ok((frames::STDOUT, data)) if stdout_open => {
                if stdout
                    .write_all(&data)
                    .and_then(|()| stdout.flush())
                    .is_err()
                {
                    // As a closed stdout ends a local line's writing stage.
                    // Told from a thread: the stdin pump may hold the
                    // socket, and this one must keep reading.
                    stdout_open = false;
                    let writer = writer.clone();
                    std::thread::spawn(move || {
                        let _ = write_frame(&mut *lock(&writer), frames::STDOUT_CLOSED, b"");
                    });
                }
            }
            Ok((frames::STDERR, data)) => {
                let _ = io::stderr().write_all(&data);
            }
            Ok((frames::EXIT, code)) => return code.first().copied().unwrap_or(ENGINE_EXIT),
            Ok(_) => {}
            Err(e) => {
                eprintln!("{bin}: daemon: the daemon went away during the line: {e}");
                return ENGINE_EXIT;
            }
        }
    }
}

/// Sends this process's stdin to the daemon, from a thread of its own.
fn send_stdin(writer: Arc<Mutex<UnixStream>>, bin: String) {
    let pump = move || {
        let mut stdin = io::stdin().lock();
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            match stdin.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if write_frame(&mut *lock(&writer), frames::STDIN, &chunk[..n]).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = write_frame(&mut *lock(&writer), frames::STDIN_END, b"");
    };
    if let Err(e) = std::thread::Builder::new()
        .name("wb-stdin".into())
        .spawn(pump)
    {
        eprintln!("{bin}: daemon: cannot send stdin to the daemon: {e}");
    }
}

/// The socket of the daemon serving `home`, connected; `None` when none
/// listens there, when the process listening is not this user's (nothing
/// is sent to it), or when `WB_DAEMON=0` asks that no line go through one.
/// Connected before a request is built: with no daemon, a client spends
/// nothing on one.
pub fn connect(home: &Path) -> Option<UnixStream> {
    if std::env::var_os("WB_DAEMON").is_some_and(|v| v == "0") {
        return None;
    }
    let path = crate::socket_path(home, false).ok()?;
    let stream = UnixStream::connect(path).ok()?;
    crate::peer_is_me(&stream).then_some(stream)
}

/// What became of a line offered to a daemon.
pub enum Served {
    /// The daemon ran it; its exit code.
    Exit(u8),
    /// The daemon refused it; why. The client runs it itself.
    Refused(String),
    /// The socket failed before the daemon answered; the client runs it.
    Unanswered,
}

/// Offers `request` on `stream` (from [`connect`]); once accepted, the line
/// is the daemon's and this pumps it to its exit code (`bin` starts the
/// message of a daemon lost mid-line).
pub fn offer(stream: UnixStream, request: &Request, bin: &str) -> Served {
    match open(stream, request) {
        Ok(Answer::Accepted { reader, writer }) => Served::Exit(pump(reader, &writer, bin)),
        Ok(Answer::Refused(why)) => Served::Refused(why),
        Err(_) => Served::Unanswered,
    }
}
