//! The store's S3-compatible backend (`s3://bucket/prefix`): AWS S3, MinIO, Ceph, R2, moto.
//!
//! Entries are objects `prefix/objects/<xx>/<key>.entry` in the same checksummed format as the
//! directory store's files; a PUT replaces an object atomically, so readers see a whole entry or
//! none, and concurrent writers of one key both succeed. Claims are objects `prefix/claims/<key>`
//! created with `If-None-Match: *` (only one creator succeeds); the holder rewrites its claim every
//! third of the lease and deletes it when done, and a claim not rewritten for the [`LEASE`] (by the server's
//! clock: its `Date` against the claim's `Last-Modified`) belongs to a dead holder and may be taken.
//!
//! Configuration comes from the usual environment variables: `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` (optional), `AWS_REGION` or `AWS_DEFAULT_REGION`
//! (default `us-east-1`), and `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` for a server other than
//! AWS (then addressed path-style: `endpoint/bucket/key`). Requests are signed with AWS Signature
//! Version 4.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// A claim not rewritten for this long is a dead holder's (default; `KILN_S3_LEASE_SECONDS`
/// changes it, for tests that kill holders).
pub const LEASE: Duration = Duration::from_secs(30);

/// The lease in force (see [`LEASE`]).
pub fn lease() -> Duration {
    std::env::var("KILN_S3_LEASE_SECONDS").ok().and_then(|v| v.parse::<u64>().ok()).filter(|&s| s >= 3).map_or(LEASE, Duration::from_secs)
}

/// Where the store lives and how to reach it.
#[derive(Clone, Debug)]
pub struct S3Config {
    /// `scheme://host[:port]` of the server.
    pub endpoint: String,
    /// Address objects as `endpoint/bucket/key` (custom endpoints) rather than `bucket.host/key`.
    pub path_style: bool,
    /// The bucket.
    pub bucket: String,
    /// Key prefix of every object, without a trailing slash (may be empty).
    pub prefix: String,
    /// The signing region.
    pub region: String,
    /// `AWS_ACCESS_KEY_ID`.
    pub access_key: String,
    /// `AWS_SECRET_ACCESS_KEY`.
    pub secret_key: String,
    /// `AWS_SESSION_TOKEN`, for temporary credentials.
    pub session_token: Option<String>,
}

impl S3Config {
    /// `s3://bucket[/prefix]` with the rest from the environment (see the module documentation).
    pub fn from_uri(uri: &str) -> Result<S3Config, String> {
        let rest = uri.strip_prefix("s3://").ok_or_else(|| format!("{uri}: not an s3:// address"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() || !bucket.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.') {
            return Err(format!("{uri}: {bucket:?} is not a bucket name (lower-case letters, digits, '-' and '.')"));
        }
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let region = var("AWS_REGION").or_else(|| var("AWS_DEFAULT_REGION")).unwrap_or_else(|| "us-east-1".into());
        let custom = var("AWS_ENDPOINT_URL_S3").or_else(|| var("AWS_ENDPOINT_URL"));
        let endpoint = custom.clone().unwrap_or_else(|| format!("https://s3.{region}.amazonaws.com"));
        let endpoint = endpoint.trim_end_matches('/').to_owned();
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(format!("the S3 endpoint {endpoint:?} must start with http:// or https://"));
        }
        let access_key = var("AWS_ACCESS_KEY_ID").ok_or_else(|| format!("{uri}: AWS_ACCESS_KEY_ID is not set"))?;
        let secret_key = var("AWS_SECRET_ACCESS_KEY").ok_or_else(|| format!("{uri}: AWS_SECRET_ACCESS_KEY is not set"))?;
        Ok(S3Config {
            endpoint,
            path_style: custom.is_some(),
            bucket: bucket.to_owned(),
            prefix: prefix.trim_matches('/').to_owned(),
            region,
            access_key,
            secret_key,
            session_token: var("AWS_SESSION_TOKEN"),
        })
    }

    /// The object key of `name` under the prefix.
    pub fn object(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{}/{name}", self.prefix)
        }
    }

    /// `(url, host header, canonical URI)` of an object.
    fn address(&self, object: &str) -> (String, String, String) {
        let (scheme, host) = self.endpoint.split_once("://").expect("checked in from_uri");
        let key = uri_encode(object, false);
        if self.path_style {
            let path = format!("/{}/{key}", self.bucket);
            (format!("{scheme}://{host}{path}"), host.to_owned(), path)
        } else {
            let host = format!("{}.{host}", self.bucket);
            let path = format!("/{key}");
            (format!("{scheme}://{host}{path}"), host, path)
        }
    }
}

/// Percent-encodes everything but unreserved characters (and `/` unless `slash`), as SigV4 wants.
fn uri_encode(s: &str, slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b'/' if !slash => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

/// `YYYYMMDDTHHMMSSZ` of a Unix time (UTC), from the civil calendar of the days since 1970.
fn amz_date(unix: u64) -> String {
    let (days, secs) = ((unix / 86400) as i64, unix % 86400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + (month <= 2) as i64;
    format!("{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z", secs / 3600, secs / 60 % 60, secs % 60)
}

/// The `Authorization` header of a request: SigV4 over `method`, `canonical_uri`, the
/// (lower-case, sorted) `headers` to sign and the payload's SHA-256 (hex).
fn authorization(cfg: &S3Config, method: &str, canonical_uri: &str, headers: &[(String, String)], payload_hash: &str, date: &str) -> String {
    let mut headers: Vec<&(String, String)> = headers.iter().collect();
    headers.sort();
    let canonical_headers: String = headers.iter().map(|(k, v)| format!("{k}:{}\n", v.trim())).collect();
    let signed: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
    let signed = signed.join(";");
    let request = format!("{method}\n{canonical_uri}\n\n{canonical_headers}\n{signed}\n{payload_hash}");
    let day = &date[..8];
    let scope = format!("{day}/{}/s3/aws4_request", cfg.region);
    let to_sign = format!("AWS4-HMAC-SHA256\n{date}\n{scope}\n{}", hex(&Sha256::digest(request.as_bytes())));
    let mut key = hmac(format!("AWS4{}", cfg.secret_key).as_bytes(), day.as_bytes());
    for part in [cfg.region.as_str(), "s3", "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    let signature = hex(&hmac(&key, to_sign.as_bytes()));
    format!("AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed}, Signature={signature}", cfg.access_key)
}

/// What a request returned: status, the headers asked for, and the body.
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// The server's `Date` header.
    pub date: Option<String>,
    /// The object's `Last-Modified` header.
    pub last_modified: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

/// A signed-request client of one bucket and prefix.
#[derive(Clone)]
pub struct S3Client {
    cfg: Arc<S3Config>,
    agent: ureq::Agent,
}

impl std::fmt::Debug for S3Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "S3Client(s3://{}/{})", self.cfg.bucket, self.cfg.prefix)
    }
}

impl S3Client {
    /// A client of `cfg`'s bucket and prefix.
    pub fn new(cfg: S3Config) -> S3Client {
        let agent = ureq::AgentBuilder::new().timeout_connect(Duration::from_secs(10)).timeout(Duration::from_secs(300)).build();
        S3Client { cfg: Arc::new(cfg), agent }
    }

    /// Where it points.
    pub fn config(&self) -> &S3Config {
        &self.cfg
    }

    /// Sends `method` on object `name` (under the prefix) with `extra` headers (lower-case names)
    /// and `body`; any HTTP status is a reply, only a failure to talk to the server is an error.
    pub fn request(&self, method: &str, name: &str, extra: &[(&str, &str)], body: &[u8]) -> Result<Reply, String> {
        let (url, host, canonical_uri) = self.cfg.address(&self.cfg.object(name));
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let date = amz_date(now);
        let payload_hash = hex(&Sha256::digest(body));
        let mut headers: Vec<(String, String)> =
            vec![("host".into(), host), ("x-amz-content-sha256".into(), payload_hash.clone()), ("x-amz-date".into(), date.clone())];
        if let Some(t) = &self.cfg.session_token {
            headers.push(("x-amz-security-token".into(), t.clone()));
        }
        headers.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let auth = authorization(&self.cfg, method, &canonical_uri, &headers, &payload_hash, &date);
        let mut req = self.agent.request(method, &url).set("authorization", &auth);
        for (k, v) in headers.iter().filter(|(k, _)| k != "host") {
            req = req.set(k, v);
        }
        let result = if method == "PUT" { req.send_bytes(body) } else { req.call() };
        let resp = match result {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(ureq::Error::Transport(t)) => return Err(format!("{method} {url}: {t}")),
        };
        let status = resp.status();
        let date = resp.header("date").map(str::to_owned);
        let last_modified = resp.header("last-modified").map(str::to_owned);
        let mut body = Vec::new();
        resp.into_reader().read_to_end(&mut body).map_err(|e| format!("{method} {url}: reading the reply: {e}"))?;
        Ok(Reply { status, date, last_modified, body })
    }

    /// Creates the bucket (for tests against a fresh server); an existing one is fine.
    pub fn create_bucket(&self) -> Result<(), String> {
        let cfg = S3Config { prefix: String::new(), ..(*self.cfg).clone() };
        let (url, host, canonical_uri) = cfg.address("");
        let date = amz_date(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()));
        let payload_hash = hex(&Sha256::digest(b""));
        let headers = vec![("host".into(), host), ("x-amz-content-sha256".into(), payload_hash.clone()), ("x-amz-date".into(), date.clone())];
        let auth = authorization(&cfg, "PUT", &canonical_uri, &headers, &payload_hash, &date);
        let req = self.agent.put(&url).set("authorization", &auth).set("x-amz-content-sha256", &payload_hash).set("x-amz-date", &date);
        match req.send_bytes(b"") {
            Ok(_) | Err(ureq::Error::Status(409, _)) => Ok(()),
            Err(e) => Err(format!("creating bucket {}: {e}", cfg.bucket)),
        }
    }
}

/// Seconds between two HTTP dates (`Sun, 06 Nov 1994 08:49:37 GMT`), `later - earlier`.
pub fn http_age(earlier: &str, later: &str) -> Option<i64> {
    Some(http_seconds(later)? - http_seconds(earlier)?)
}

fn http_seconds(d: &str) -> Option<i64> {
    let parts: Vec<&str> = d.split_whitespace().collect();
    let [_, day, month, year, time, _] = parts[..] else { return None };
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let m = MONTHS.iter().position(|&x| x == month)? as i64 + 1;
    let (d, y): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time.split(':').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    let [h, mi, s] = hms[..] else { return None };
    // Days from the civil date (the inverse of `amz_date`'s calendar).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86400 + h * 3600 + mi * 60 + s)
}

/// A held claim's heartbeat: rewrites the claim object until dropped, then deletes it.
pub struct Heartbeat {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    client: S3Client,
    name: String,
}

impl std::fmt::Debug for Heartbeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Heartbeat({})", self.name)
    }
}

impl Heartbeat {
    /// Rewrites claim object `name` every third of the lease until dropped.
    pub fn start(client: S3Client, name: String) -> Heartbeat {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::spawn({
            let (stop, client, name) = (stop.clone(), client.clone(), name.clone());
            move || {
                let step = Duration::from_millis(200);
                let beat = lease() / 3;
                let mut waited = Duration::ZERO;
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(step);
                    waited += step;
                    if waited >= beat {
                        waited = Duration::ZERO;
                        let _ = client.request("PUT", &name, &[], b"held");
                    }
                }
            }
        });
        Heartbeat { stop, thread: Some(thread), client, name }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = self.client.request("DELETE", &self.name, &[], b"");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> S3Config {
        S3Config {
            endpoint: "https://s3.amazonaws.com".into(),
            path_style: false,
            bucket: "examplebucket".into(),
            prefix: String::new(),
            region: "us-east-1".into(),
            access_key: "AKIAIOSFODNN7EXAMPLE".into(),
            secret_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
        }
    }

    /// AWS's published example of a signed GET (S3 API reference, "Signature Calculations for the
    /// Authorization Header", GET Object with a Range header).
    #[test]
    fn signature_matches_the_aws_documentation_example() {
        let cfg = example();
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        let (url, host, uri) = cfg.address("test.txt");
        assert_eq!(
            (url.as_str(), host.as_str(), uri.as_str()),
            ("https://examplebucket.s3.amazonaws.com/test.txt", "examplebucket.s3.amazonaws.com", "/test.txt")
        );
        let headers = vec![
            ("host".to_string(), host),
            ("range".to_string(), "bytes=0-9".to_string()),
            ("x-amz-content-sha256".to_string(), empty.to_string()),
            ("x-amz-date".to_string(), "20130524T000000Z".to_string()),
        ];
        let auth = authorization(&cfg, "GET", &uri, &headers, empty, "20130524T000000Z");
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }

    #[test]
    fn dates_and_addresses() {
        assert_eq!(amz_date(1_369_353_600), "20130524T000000Z");
        assert_eq!(amz_date(951_782_400 + 3661), "20000229T010101Z");
        assert_eq!(http_age("Fri, 24 May 2013 00:00:00 GMT", "Sat, 01 Mar 2014 00:00:10 GMT"), Some(281 * 86400 + 10));
        assert_eq!(http_seconds("Fri, 24 May 2013 00:00:00 GMT"), Some(1_369_353_600));
        let mut cfg = example();
        cfg.endpoint = "http://127.0.0.1:9000".into();
        cfg.path_style = true;
        cfg.prefix = "bakes/ci".into();
        let (url, host, uri) = cfg.address(&cfg.object("objects/ab/x y.entry"));
        assert_eq!(url, "http://127.0.0.1:9000/examplebucket/bakes/ci/objects/ab/x%20y.entry");
        assert_eq!((host.as_str(), uri.as_str()), ("127.0.0.1:9000", "/examplebucket/bakes/ci/objects/ab/x%20y.entry"));
        assert!(S3Config::from_uri("s3://Bad_Bucket/x").is_err());
        assert!(S3Config::from_uri("file:///x").is_err());
    }
}
