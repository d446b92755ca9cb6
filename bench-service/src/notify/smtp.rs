//! Mail through a relay: one plain SMTP session (RFC 5321: EHLO, MAIL, RCPT, DATA, QUIT) per
//! notice, the notice's sentence as the subject and its JSON in the body. No TLS and no login:
//! the relay is a lab's own, accepting mail from the bench PC.

use super::notice::Notice;
use super::webhook::Answer;
use bench_daemon::config::SmtpConfig;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Sends `notice` through `relay`; the relay's last reply code, or why it failed.
pub async fn send(relay: &SmtpConfig, notice: &Notice) -> Answer {
    let addr = format!("{}:{}", relay.host, relay.port);
    let stream = TcpStream::connect(&addr)
        .await
        .map_err(|e| (0, format!("connecting to {addr}: {e}")))?;
    let mut s = Session {
        io: BufReader::new(stream),
        last: 0,
    };
    s.expect(None, 220).await?;
    s.expect(Some("EHLO frictionbench".into()), 250).await?;
    s.expect(Some(format!("MAIL FROM:<{}>", relay.from)), 250)
        .await?;
    for to in &relay.to {
        s.expect(Some(format!("RCPT TO:<{to}>")), 250).await?;
    }
    s.expect(Some("DATA".into()), 354).await?;
    let message = message(relay, notice);
    s.io.write_all(message.as_bytes())
        .await
        .map_err(|e| (s.last, format!("{addr}: {e}")))?;
    s.expect(Some(".".into()), 250).await?;
    let accepted = s.last;
    // The message is the relay's once DATA is accepted; a QUIT answered badly changes nothing.
    let _ = s.expect(Some("QUIT".into()), 221).await;
    Ok(accepted)
}

struct Session {
    io: BufReader<TcpStream>,
    /// The last reply code read.
    last: u16,
}

impl Session {
    /// Sends `line` (if any) and reads the reply, which must be of `want`'s class (2xx, 3xx).
    async fn expect(&mut self, line: Option<String>, want: u16) -> Result<(), (u16, String)> {
        if let Some(line) = &line {
            let out = format!("{line}\r\n");
            self.io
                .get_mut()
                .write_all(out.as_bytes())
                .await
                .map_err(|e| (self.last, format!("sending {line}: {e}")))?;
        }
        let said = line.as_deref().unwrap_or("the greeting");
        let (code, text) = self
            .reply()
            .await
            .map_err(|e| (self.last, format!("{said}: {e}")))?;
        self.last = code;
        match code / 100 == want / 100 {
            true => Ok(()),
            false => Err((code, format!("{said}: the relay answered {code} {text}"))),
        }
    }

    /// One reply, its continuation lines (`250-...`) joined.
    async fn reply(&mut self) -> Result<(u16, String), String> {
        let mut text = String::new();
        loop {
            let mut line = String::new();
            let n = self
                .io
                .read_line(&mut line)
                .await
                .map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("the relay closed the connection".into());
            }
            let code = line
                .get(..3)
                .and_then(|c| c.parse::<u16>().ok())
                .ok_or_else(|| format!("not an SMTP reply: {:?}", line.trim_end()))?;
            text.push_str(line.get(4..).unwrap_or("").trim_end());
            if line.as_bytes().get(3) != Some(&b'-') {
                return Ok((code, text));
            }
            text.push(' ');
        }
    }
}

/// The message (RFC 5322), dot-stuffed, ending before the lone `.`.
fn message(relay: &SmtpConfig, n: &Notice) -> String {
    let subject: String = n
        .text
        .chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                '?'
            }
        })
        .collect();
    let json = serde_json::to_string_pretty(n).unwrap_or_default();
    let date = chrono::Utc::now().to_rfc2822();
    let mut m = format!(
        "From: <{}>\r\nTo: {}\r\nSubject: {subject}\r\nDate: {date}\r\nMIME-Version: 1.0\r\n\
         Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\
         X-Frictionbench-Event: {}\r\n\r\n",
        relay.from,
        relay
            .to
            .iter()
            .map(|t| format!("<{t}>"))
            .collect::<Vec<_>>()
            .join(", "),
        n.event.as_str(),
    );
    for line in format!("{}\n\n{json}\n", n.text).lines() {
        if line.starts_with('.') {
            m.push('.');
        }
        m.push_str(line);
        m.push_str("\r\n");
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_daemon::config::NotifyEvent;

    #[test]
    fn lines_starting_with_a_dot_are_stuffed_and_the_subject_is_ascii() {
        let relay = SmtpConfig {
            host: "relay".into(),
            port: 25,
            from: "bench@lab".into(),
            to: vec!["a@lab".into(), "b@lab".into()],
        };
        let mut n = Notice::queue_paused("b1");
        n.text = "run 3 failed: drive disabled 80 µs\n.".into();
        assert_eq!(n.event, NotifyEvent::QueuePaused);
        let m = message(&relay, &n);
        assert!(
            m.contains("Subject: run 3 failed: drive disabled 80 ?s?."),
            "{m}"
        );
        assert!(m.contains("\r\n..\r\n"), "{m}");
        assert!(m.contains("To: <a@lab>, <b@lab>\r\n"), "{m}");
        assert!(!m.lines().any(|l| l == "."), "{m}");
    }
}
