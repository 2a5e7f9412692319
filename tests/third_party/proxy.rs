//! The authenticating loopback proxy between the conformance suite and the gateway.
//!
//! Owns: accepting the suite's connections on a port picked free, and forwarding every HTTP/1.1 request
//! to the gateway with exactly two edits to the request head: a `Authorization: Bearer <token>` field line
//! is appended when the request has none (the suite never sends one; http-mcp.md §6.5 M5 requires it),
//! and a `Host` whose OWS-trimmed value is the proxy's own authority is rewritten to the gateway's
//! configured authority, as any reverse proxy does (M3 would otherwise refuse every request). Every other
//! byte, including a foreign `Host` (the DNS-rebinding probe), `Origin`, the order and letter case of
//! field lines and the body, is forwarded unchanged; responses are relayed raw. Keep-alive works because
//! the body of each request is delimited (Content-Length or chunked) before the next head is read; a head
//! the proxy cannot edit (oversized, or with framing it cannot delimit) is passed on raw with everything
//! after it, so the gateway, not the proxy, answers it.
//!
//! Does not own: any MCP knowledge, TLS, HTTP/2 or request pipelining beyond what HTTP/1.1 framing gives.
//! It is test support: every thread is joined and every socket shut down when the `Proxy` is dropped.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Largest request head the proxy buffers; above it the gateway would refuse anyway (http-mcp.md §2.4).
const MAX_HEAD: usize = 128 * 1024;

/// What the proxy puts in or rewrites; fixed when it starts.
#[derive(Clone)]
pub struct Rewrite {
    own_authority: String,
    upstream_authority: String,
    authorization: String,
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    forwarded: AtomicUsize,
    sockets: Mutex<Vec<TcpStream>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

/// A running proxy; stops, shuts every socket and joins every thread on drop.
pub struct Proxy {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Serves on `listener` (already bound, so its port could be written into the deployment first) and
    /// forwards to `upstream`, adding `Authorization: Bearer <bearer>`.
    pub fn start(listener: TcpListener, upstream: SocketAddr, bearer: &str) -> Proxy {
        let addr = listener.local_addr().expect("proxy addr");
        let rewrite =
            Rewrite::new(&crate::support::authority(addr), &crate::support::authority(upstream), bearer);
        let shared = Arc::new(Shared::default());
        let acceptor = {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || accept_loop(listener, upstream, rewrite, shared))
        };
        Proxy { addr, shared, acceptor: Some(acceptor) }
    }

    /// Requests forwarded so far (heads written to the gateway).
    pub fn forwarded(&self) -> usize {
        self.shared.forwarded.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept; the loop sees `stop` and ends.
        let _ = TcpStream::connect(self.addr);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
        for socket in self.shared.sockets.lock().map(|mut s| std::mem::take(&mut *s)).unwrap_or_default() {
            let _ = socket.shutdown(Shutdown::Both);
        }
        let threads = self.shared.threads.lock().map(|mut t| std::mem::take(&mut *t)).unwrap_or_default();
        for thread in threads {
            let _ = thread.join();
        }
    }
}

fn accept_loop(listener: TcpListener, upstream: SocketAddr, rewrite: Rewrite, shared: Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        let Ok(server) = TcpStream::connect(upstream) else {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        };
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        let clones = (client.try_clone(), server.try_clone(), client.try_clone(), server.try_clone());
        let (Ok(client_w), Ok(server_r), Ok(client_t), Ok(server_t)) = clones else { continue };
        if let Ok(mut sockets) = shared.sockets.lock() {
            sockets.push(client_t);
            sockets.push(server_t);
        }
        let requests = {
            let (rewrite, shared) = (rewrite.clone(), Arc::clone(&shared));
            std::thread::spawn(move || forward_requests(client, server, &rewrite, &shared))
        };
        let responses = std::thread::spawn(move || relay_responses(server_r, client_w));
        if let Ok(mut threads) = shared.threads.lock() {
            threads.push(requests);
            threads.push(responses);
        }
    }
}

/// Upstream to client, raw. When the gateway closes, the client connection is closed too.
fn relay_responses(mut server: TcpStream, mut client: TcpStream) {
    let _ = io::copy(&mut server, &mut client);
    let _ = client.shutdown(Shutdown::Both);
}

/// Client to upstream: one request at a time, head edited, body forwarded by its framing.
fn forward_requests(client: TcpStream, mut server: TcpStream, rewrite: &Rewrite, shared: &Shared) {
    let mut reader = BufReader::new(client);
    loop {
        let forwarded = match read_head(&mut reader) {
            Ok(Head::Complete(head)) => {
                let (edited, framing) = edit_head(&head, rewrite);
                shared.forwarded.fetch_add(1, Ordering::SeqCst);
                server.write_all(&edited).and_then(|()| match framing {
                    Framing::Length(n) => copy_exact(&mut reader, &mut server, n),
                    Framing::Chunked => copy_chunked(&mut reader, &mut server),
                    Framing::UntilClose => io::copy(&mut reader, &mut server).map(|_| ()),
                })
            }
            // Too large to be a head the proxy edits: pass it and the rest on raw, so the gateway gives
            // its own answer (http-mcp.md §2.4) instead of the proxy inventing one.
            Ok(Head::Oversized(start)) => server
                .write_all(&start)
                .and_then(|()| io::copy(&mut reader, &mut server).map(|_| ()))
                .and(Err(io::ErrorKind::UnexpectedEof.into())),
            // End of stream between requests, or a read error: the end is passed on below.
            Ok(Head::End) | Err(_) => Err(io::ErrorKind::UnexpectedEof.into()),
        };
        if forwarded.is_err() {
            break;
        }
    }
    let _ = server.shutdown(Shutdown::Write);
}

/// What reading one request head gave.
enum Head {
    /// Through its blank line.
    Complete(Vec<u8>),
    /// More than [`MAX_HEAD`] bytes without a blank line: the bytes read so far.
    Oversized(Vec<u8>),
    /// A clean end of stream before any byte.
    End,
}

/// How the body of one request is delimited (RFC 9112 §6.3, request side).
#[derive(Debug, PartialEq, Eq)]
pub enum Framing {
    Length(u64),
    Chunked,
    /// Unparseable framing: forward everything that follows, unchanged, and let the gateway judge it.
    UntilClose,
}

fn read_head(reader: &mut BufReader<TcpStream>) -> io::Result<Head> {
    let mut head = Vec::new();
    loop {
        let before = head.len();
        // Bounded, so a line without end cannot grow the buffer past the limit.
        let room = (MAX_HEAD + 1).saturating_sub(head.len()) as u64;
        let n = (&mut *reader).take(room).read_until(b'\n', &mut head)?;
        if n == 0 {
            return if head.is_empty() { Ok(Head::End) } else { Err(io::ErrorKind::UnexpectedEof.into()) };
        }
        if head.len() > MAX_HEAD {
            return Ok(Head::Oversized(head));
        }
        let line = &head[before..];
        if line == b"\r\n" || line == b"\n" {
            // Empty lines before the request line are ignored, as the gateway would (RFC 9112 §2.2).
            if before == 0 {
                head.clear();
                continue;
            }
            return Ok(Head::Complete(head));
        }
    }
}

/// The edited head and the framing of the body that follows it.
pub fn edit_head(head: &[u8], rewrite: &Rewrite) -> (Vec<u8>, Framing) {
    let body_start = head.len() - if head.ends_with(b"\r\n\r\n") { 2 } else { 1 };
    let mut out = Vec::with_capacity(head.len() + 64);
    let mut has_authorization = false;
    let (mut length, mut chunked, mut bad) = (None::<u64>, false, false);
    for (index, line) in split_lines(&head[..body_start]).into_iter().enumerate() {
        let Some((name, value)) = field(line).filter(|_| index > 0) else {
            out.extend_from_slice(line);
            continue;
        };
        let value_text = String::from_utf8_lossy(value);
        if name.eq_ignore_ascii_case(b"authorization") {
            has_authorization = true;
        } else if name.eq_ignore_ascii_case(b"content-length") {
            match (value_text.parse::<u64>(), length) {
                (Ok(n), None) => length = Some(n),
                (Ok(n), Some(m)) if n == m => {}
                _ => bad = true,
            }
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            chunked = value_text.rsplit(',').next().is_some_and(|c| c.trim().eq_ignore_ascii_case("chunked"));
            bad |= !chunked;
        } else if name.eq_ignore_ascii_case(b"host") && value_text == rewrite.own_authority {
            out.extend_from_slice(name);
            out.extend_from_slice(format!(": {}\r\n", rewrite.upstream_authority).as_bytes());
            continue;
        }
        out.extend_from_slice(line);
    }
    if !has_authorization {
        out.extend_from_slice(format!("Authorization: {}\r\n", rewrite.authorization).as_bytes());
    }
    out.extend_from_slice(&head[body_start..]);
    let framing = match (bad, chunked, length) {
        (true, _, _) => Framing::UntilClose,
        (false, true, _) => Framing::Chunked,
        (false, false, Some(n)) => Framing::Length(n),
        (false, false, None) => Framing::Length(0),
    };
    (out, framing)
}

impl Rewrite {
    pub fn new(own_authority: &str, upstream_authority: &str, bearer: &str) -> Rewrite {
        Rewrite {
            own_authority: own_authority.to_string(),
            upstream_authority: upstream_authority.to_string(),
            authorization: format!("Bearer {bearer}"),
        }
    }
}

/// Lines of a head, each with its line ending.
fn split_lines(head: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, b) in head.iter().enumerate() {
        if *b == b'\n' {
            lines.push(&head[start..=i]);
            start = i + 1;
        }
    }
    if start < head.len() {
        lines.push(&head[start..]);
    }
    lines
}

/// (name, OWS-trimmed value) of a field line, or `None` when the line has no colon.
fn field(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = line.iter().position(|b| *b == b':')?;
    let is_ows = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let value = &line[colon + 1..];
    let start = value.iter().position(|b| !is_ows(b)).unwrap_or(value.len());
    let end = value.iter().rposition(|b| !is_ows(b)).map_or(start, |e| e + 1);
    Some((&line[..colon], &value[start..end.max(start)]))
}

fn copy_exact(reader: &mut impl Read, writer: &mut impl Write, n: u64) -> io::Result<()> {
    let copied = io::copy(&mut reader.take(n), writer)?;
    if copied == n {
        Ok(())
    } else {
        Err(io::ErrorKind::UnexpectedEof.into())
    }
}

/// Forwards a chunked body byte for byte: size lines, data, CRLFs, the last chunk and the trailers.
fn copy_chunked(reader: &mut BufReader<TcpStream>, writer: &mut TcpStream) -> io::Result<()> {
    loop {
        let mut size_line = Vec::new();
        if reader.read_until(b'\n', &mut size_line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        writer.write_all(&size_line)?;
        let text = String::from_utf8_lossy(&size_line);
        let digits = text.split(';').next().unwrap_or_default().trim();
        let Ok(size) = u64::from_str_radix(digits, 16) else {
            // Not a chunk-size line: hand the rest over unchanged and let the gateway refuse it (§6.9).
            return io::copy(reader, writer).map(|_| ());
        };
        if size == 0 {
            return copy_trailers(reader, writer);
        }
        copy_exact(reader, writer, size + 2)?;
    }
}

fn copy_trailers(reader: &mut BufReader<TcpStream>, writer: &mut TcpStream) -> io::Result<()> {
    loop {
        let mut line = Vec::new();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        writer.write_all(&line)?;
        if line == b"\r\n" || line == b"\n" {
            return Ok(());
        }
    }
}
