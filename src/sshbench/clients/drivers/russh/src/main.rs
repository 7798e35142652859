//! sshbench's driver for russh (with russh-sftp for SFTP), for `sshbench clients`. It takes the command line of
//! the Python drivers and prints their lines (src/sshbench/clients/drivers/common.py): `ready`, `authenticated`,
//! `command sent`, `received N`, `copied`, `connection K took S`, `version V`, `ciphers A,B`, `macs A,B`,
//! `kex A,B`, `kex-default A,B`, `error: TEXT`, and in soak mode `login ok S` or `login failed TEXT` per line of
//! stdin (a key exchange to pin, or `-`). The exit status is the remote command's, 255 on a failure.

use std::borrow::Cow;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use russh::client::{self, Handle};
use russh::keys::known_hosts::known_host_keys_path;
use russh::keys::ssh_key::{Algorithm, PublicKey};
use russh::keys::{check_known_hosts_path, load_secret_key, HashAlg, PrivateKeyWithHashAlg};
use russh::{cipher, kex, mac, ChannelMsg, Disconnect, Preferred};
use russh_sftp::client::SftpSession;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const FAILED: i32 = 255;
const SFTP_VERSION: &str = "2.4.0"; // Cargo.toml's pin (tests/clients/test_build.py checks)
const TUNED_WINDOW: u32 = 64 << 20; // tuned: the channel window and packet size, and SFTP writes in flight
const TUNED_PACKET: u32 = 65535;
const TUNED_WRITES: usize = 64;
const TUNED_BUFFER: usize = 256 << 10; // tuned SFTP: each read request and write of up to 256 KiB (tokio's copy: 8 KiB)

/// One invocation: where, how to verify and log in, the algorithms, the setting and what to do.
#[derive(Default, Clone)]
struct Args {
    host: String,
    port: u16,
    user: String,
    keys: Vec<PathBuf>,
    known_hosts: Vec<PathBuf>,
    cipher: Option<String>,
    mac: Option<String>,
    kex: Option<String>,
    hostkey: Option<String>,
    tuned: bool,
    mode: String,
    operands: Vec<String>,
}

/// Print one line for sshbench on stderr.
fn say(text: &str) {
    eprintln!("sshbench-driver: {text}");
}

/// Read the command line: options, then the mode and its operands.
fn parse() -> Result<Args, String> {
    let mut a = Args {
        host: "127.0.0.1".into(),
        port: 22,
        ..Default::default()
    };
    let mut it = std::env::args().skip(1);
    while let Some(word) = it.next() {
        let mut value = || it.next().ok_or(format!("{word} needs a value"));
        match word.as_str() {
            "--host" => a.host = value()?,
            "--port" => a.port = value()?.parse().map_err(|e| format!("--port: {e}"))?,
            "--user" => a.user = value()?,
            "--key" => a.keys.push(value()?.into()),
            "--known-hosts" => a.known_hosts.push(value()?.into()),
            "--cipher" => a.cipher = Some(value()?),
            "--mac" => a.mac = Some(value()?),
            "--kex" => a.kex = Some(value()?),
            "--hostkey" => a.hostkey = Some(value()?),
            "--tuned" => a.tuned = true,
            _ => {
                a.mode = word;
                a.operands = it.collect();
                return Ok(a);
            }
        }
    }
    Err("no mode given (exec, connect, get, put, version or soak)".into())
}

/// Return russh's version, as its client announces itself, and russh-sftp's.
fn version() -> String {
    let russh = match client::Config::default().client_id {
        russh::SshId::Standard(id) => id.trim_start_matches("SSH-2.0-").replace('_', " "),
        _ => "russh".into(),
    };
    format!("{russh} (russh-sftp {SFTP_VERSION})")
}

/// Return the names russh can pin, without `none`.
fn names<T: AsRef<str>>(all: &[&T]) -> String {
    let usable = all
        .iter()
        .map(|n| n.as_ref())
        .filter(|n| *n != "none" && *n != "clear" && !n.starts_with("ext-info-") && !n.starts_with("kex-strict-"));
    usable.collect::<Vec<_>>().join(",")
}

/// Verifies the server's key against the known_hosts files (an unknown key is refused, never learned).
struct Verifier {
    args: Arc<Args>,
}

impl client::Handler for Verifier {
    type Error = russh::Error;

    async fn check_server_key(&mut self, key: &PublicKey) -> Result<bool, Self::Error> {
        for path in &self.args.known_hosts {
            if check_known_hosts_path(&self.args.host, self.args.port, key, path)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Return the host key algorithms known_hosts holds for the host, so the server is asked for one that can be
/// verified (russh's own order would ask for ed25519 where only an RSA key is known).
fn host_key_algorithms(a: &Args) -> Result<Vec<Algorithm>, String> {
    let mut out = vec![];
    for path in &a.known_hosts {
        for (_, key) in known_host_keys_path(&a.host, a.port, path).map_err(|e| e.to_string())? {
            match key.algorithm() {
                Algorithm::Rsa { .. } => {
                    out.push(Algorithm::Rsa {
                        hash: Some(HashAlg::Sha512),
                    });
                    out.push(Algorithm::Rsa {
                        hash: Some(HashAlg::Sha256),
                    });
                }
                other => out.push(other),
            }
        }
    }
    if out.is_empty() {
        let files: Vec<_> = a
            .known_hosts
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        return Err(format!(
            "no known_hosts line for [{}]:{} in {}: sshbench never accepts a host key",
            a.host,
            a.port,
            files.join(", ")
        ));
    }
    Ok(out)
}

/// Return russh's settings: its defaults, or tuned (no Nagle, window and packet size), with the pinned algorithms.
fn config(a: &Args) -> Result<client::Config, String> {
    let keys = match &a.hostkey {
        Some(given) => vec![given
            .parse::<Algorithm>()
            .map_err(|e| format!("russh has no host key algorithm {given}: {e}"))?],
        None => host_key_algorithms(a)?,
    };
    let mut preferred = Preferred {
        key: Cow::Owned(keys),
        ..Preferred::default()
    };
    if let Some(given) = &a.cipher {
        let found = cipher::ALL_CIPHERS
            .iter()
            .find(|n| n.as_ref() == given.as_str());
        preferred.cipher = Cow::Owned(vec![**found.ok_or(format!("russh has no cipher {given}"))?]);
    }
    if let Some(given) = &a.mac {
        let found = mac::ALL_MAC_ALGORITHMS
            .iter()
            .find(|n| n.as_ref() == given.as_str());
        preferred.mac = Cow::Owned(vec![**found.ok_or(format!("russh has no MAC {given}"))?]);
    }
    if let Some(given) = &a.kex {
        let found = kex::ALL_KEX_ALGORITHMS
            .iter()
            .find(|n| n.as_ref() == given.as_str());
        let pinned = **found.ok_or(format!("russh has no key exchange {given}"))?;
        // the extension markers stay: dropping them changes more than the key exchange
        preferred.kex = Cow::Owned(vec![
            pinned,
            kex::EXTENSION_SUPPORT_AS_CLIENT,
            kex::EXTENSION_OPENSSH_STRICT_KEX_AS_CLIENT,
        ]);
    }
    let mut c = client::Config {
        preferred,
        ..Default::default()
    };
    if a.tuned {
        c.nodelay = true; // russh leaves Nagle's algorithm on unless asked
        c.window_size = TUNED_WINDOW;
        c.maximum_packet_size = TUNED_PACKET;
    }
    Ok(c)
}

/// Connect, verify the host key and log in with the first key the server accepts.
async fn connect(a: &Arc<Args>) -> Result<Handle<Verifier>, String> {
    let c = Arc::new(config(a)?);
    let verifier = Verifier { args: a.clone() };
    let dial = client::connect(c, (a.host.as_str(), a.port), verifier);
    let mut handle = match tokio::time::timeout(Duration::from_secs(10), dial).await {
        Err(_) => return Err("no connection within 10 s".into()),
        Ok(Err(russh::Error::UnknownKey)) => {
            return Err("the host's key is not the one known_hosts holds: refused".into())
        }
        Ok(done) => done.map_err(|e| e.to_string())?,
    };
    for path in &a.keys {
        let Ok(key) = load_secret_key(path, None) else {
            continue;
        };
        let hash = handle
            .best_supported_rsa_hash()
            .await
            .map_err(|e| e.to_string())?
            .flatten();
        let signed = PrivateKeyWithHashAlg::new(Arc::new(key), hash);
        if handle
            .authenticate_publickey(&a.user, signed)
            .await
            .map_err(|e| e.to_string())?
            .success()
        {
            return Ok(handle);
        }
    }
    Err(format!(
        "public key authentication failed for {} with {:?}",
        a.user, a.keys
    ))
}

/// Run a command, sending stdin (when `input`) and writing its output to stdout; return (status, bytes received).
/// Input is sent from its own task while the output is read: russh queues the server's window adjustments with the
/// output, so a sender that does not read stalls once the queue is full.
async fn run(handle: &Handle<Verifier>, command: &str, input: bool) -> Result<(i32, u64), String> {
    let channel = handle
        .channel_open_session()
        .await
        .map_err(|e| e.to_string())?;
    channel
        .exec(true, command)
        .await
        .map_err(|e| e.to_string())?;
    let (mut read, write) = channel.split();
    let sender = tokio::spawn(async move {
        if input {
            write.data(tokio::io::stdin()).await?;
        }
        write.eof().await
    });
    let (mut status, mut count) = (FAILED, 0u64);
    let mut out = std::io::stdout().lock();
    while let Some(msg) = read.wait().await {
        match msg {
            ChannelMsg::Data { data } => {
                out.write_all(&data).map_err(|e| e.to_string())?;
                count += data.len() as u64;
            }
            ChannelMsg::ExitStatus { exit_status } => status = exit_status as i32,
            _ => {}
        }
    }
    out.flush().map_err(|e| e.to_string())?;
    sender
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    Ok((status, count))
}

/// Copy a file with SFTP: `get REMOTE LOCAL` or `put LOCAL REMOTE`.
async fn copy(handle: &Handle<Verifier>, a: &Args) -> Result<(), String> {
    let channel = handle
        .channel_open_session()
        .await
        .map_err(|e| e.to_string())?;
    channel
        .request_subsystem(true, "sftp")
        .await
        .map_err(|e| e.to_string())?;
    let mut cfg = russh_sftp::client::Config::default();
    if a.tuned {
        cfg.max_concurrent_writes = TUNED_WRITES;
    }
    let sftp = SftpSession::new_with_config(channel.into_stream(), cfg)
        .await
        .map_err(|e| e.to_string())?;
    let (from, to) = (&a.operands[0], &a.operands[1]);
    if a.mode == "get" {
        let remote = sftp.open(from).await.map_err(|e| e.to_string())?;
        let mut local = tokio::fs::File::create(to)
            .await
            .map_err(|e| e.to_string())?;
        if a.tuned {
            let mut reader = BufReader::with_capacity(TUNED_BUFFER, remote);
            tokio::io::copy_buf(&mut reader, &mut local).await
        } else {
            tokio::io::copy(&mut { remote }, &mut local).await
        }
        .map_err(|e| e.to_string())?;
        local.flush().await.map_err(|e| e.to_string())?;
    } else {
        let local = tokio::fs::File::open(from)
            .await
            .map_err(|e| e.to_string())?;
        let mut remote = sftp.create(to).await.map_err(|e| e.to_string())?;
        if a.tuned {
            let mut reader = BufReader::with_capacity(TUNED_BUFFER, local);
            tokio::io::copy_buf(&mut reader, &mut remote).await
        } else {
            tokio::io::copy(&mut { local }, &mut remote).await
        }
        .map_err(|e| e.to_string())?;
        remote.shutdown().await.map_err(|e| e.to_string())?; // every write acknowledged
    }
    sftp.close().await.map_err(|e| e.to_string())
}

/// Connect, log in, run `true` and close, operands[0] times, timing each.
async fn connections(a: &Arc<Args>) -> Result<i32, String> {
    let count: u32 = a
        .operands
        .first()
        .map_or(Ok(1), |n| n.parse())
        .map_err(|e| format!("{e}"))?;
    for i in 1..=count {
        let start = Instant::now();
        let handle = connect(a).await?;
        let (status, _) = run(&handle, "true", false).await?;
        let _ = handle.disconnect(Disconnect::ByApplication, "", "").await;
        say(&format!(
            "connection {i} took {:.6}",
            start.elapsed().as_secs_f64()
        ));
        if status != 0 {
            return Ok(status);
        }
    }
    Ok(0)
}

/// Log in once per line of stdin (`KEX [HOSTKEY]`, each `-` for russh's own choice), run `true` and close, answering each with
/// `login ok S` or `login failed TEXT`: an interop soak's logins from one process.
async fn soak(a: &Arc<Args>) -> Result<i32, String> {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = lines.next_line().await.map_err(|e| e.to_string())? {
        let mut words = line.split_whitespace().map(|w| if w == "-" { None } else { Some(w.to_string()) });
        let mut one = (**a).clone();
        one.kex = words.next().flatten();
        if let Some(hostkey) = words.next().flatten() {
            one.hostkey = Some(hostkey);
        }
        let one = Arc::new(one);
        let start = Instant::now();
        let answer = match connect(&one).await {
            Err(why) => format!("login failed {why}"),
            Ok(handle) => {
                let done = run(&handle, "true", false).await;
                let _ = handle.disconnect(Disconnect::ByApplication, "", "").await;
                match done {
                    Err(why) => format!("login failed {why}"),
                    Ok((0, _)) => format!("login ok {:.6}", start.elapsed().as_secs_f64()),
                    Ok((status, _)) => format!("login failed `true` exited with status {status}"),
                }
            }
        };
        say(&answer.replace('\n', " "));
    }
    Ok(0)
}

/// Do what the mode asks; return the exit status.
async fn work(a: Arc<Args>) -> Result<i32, String> {
    match a.mode.as_str() {
        "version" => {
            say(&format!("version {}", version()));
            say(&format!("ciphers {}", names(cipher::ALL_CIPHERS)));
            say(&format!("macs {}", names(mac::ALL_MAC_ALGORITHMS)));
            say(&format!("kex {}", names(kex::ALL_KEX_ALGORITHMS)));
            let default: Vec<&kex::Name> = Preferred::DEFAULT.kex.iter().collect();
            say(&format!("kex-default {}", names(&default)));
            return Ok(0);
        }
        "connect" => return connections(&a).await,
        "soak" => return soak(&a).await,
        "exec" | "get" | "put" => {}
        other => return Err(format!("unknown mode {other:?}")),
    }
    let handle = connect(&a).await?;
    say("authenticated");
    say("command sent");
    let status = if a.mode == "exec" {
        let (status, count) = run(&handle, &a.operands[0], true).await?;
        say(&format!("received {count}"));
        status
    } else {
        copy(&handle, &a).await?;
        say("copied");
        0
    };
    let _ = handle.disconnect(Disconnect::ByApplication, "", "").await;
    Ok(status)
}

#[tokio::main]
async fn main() {
    let a = match parse() {
        Ok(a) => Arc::new(a),
        Err(why) => {
            say(&format!("error: {why}"));
            std::process::exit(FAILED);
        }
    };
    say("ready");
    match work(a).await {
        Ok(status) if (0..=255).contains(&status) => std::process::exit(status),
        Ok(_) => std::process::exit(FAILED),
        Err(why) => {
            say(&format!("error: {}", why.replace('\n', " ")));
            std::process::exit(FAILED);
        }
    }
}
