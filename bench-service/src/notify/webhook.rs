//! A webhook: one HTTP/1.1 POST of the notice's JSON to the entry's `http://` URL, on a
//! connection of its own (hyper's client connection), answered 2xx or it failed.

use hyper::Request;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// An attempt's end: the status answered (if any) and whether it counts as delivered.
pub type Answer = Result<u16, (u16, String)>;

/// POSTs `body` (JSON) to `url` (`http://host[:port]/path`, checked by the configuration).
pub async fn post(url: &str, body: String) -> Answer {
    let fail = |why: String| (0, why);
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| fail(format!("{url}: not an http:// URL")))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr = match authority.rsplit_once(':') {
        Some((_, port)) if port.parse::<u16>().is_ok() && !authority.ends_with(']') => {
            authority.to_string()
        }
        _ => format!("{authority}:80"),
    };
    let stream = TcpStream::connect(&addr)
        .await
        .map_err(|e| fail(format!("connecting to {addr}: {e}")))?;
    let (mut sender, conn) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| fail(format!("{addr}: {e}")))?;
    let conn = tokio::spawn(conn);
    let request = Request::post(path)
        .header(hyper::header::HOST, authority)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::USER_AGENT, "frictionbench-notify")
        .body(body)
        .map_err(|e| fail(format!("{url}: {e}")))?;
    let answer = sender.send_request(request).await;
    conn.abort();
    let status = answer.map_err(|e| fail(format!("{url}: {e}")))?.status();
    match status.is_success() {
        true => Ok(status.as_u16()),
        false => Err((status.as_u16(), format!("{url} answered {status}"))),
    }
}
