//! TLS for `https` endpoints (providers.md §5.1): TLS 1.2 or 1.3 through rustls with the `ring` provider,
//! the platform's trusted roots, server name indication and host name verification.
//!
//! This file owns the one client configuration of the process and the handshake over an open TCP stream.
//! There is deliberately no client certificate, no custom trust anchor and no way to disable
//! verification. It does not resolve or connect (`pool.rs`).

use std::io;
use std::sync::{Arc, OnceLock};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, RootCertStore};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// The process-wide client configuration, built on first use. `None` only if rustls refuses the fixed
/// protocol versions for the provider, which would be a build defect; connecting then fails.
fn config() -> Option<Arc<ClientConfig>> {
    static CONFIG: OnceLock<Option<Arc<ClientConfig>>> = OnceLock::new();
    CONFIG.get_or_init(build).clone()
}

fn build() -> Option<Arc<ClientConfig>> {
    let mut roots = RootCertStore::empty();
    // Unreadable or malformed platform certificates are skipped; with no usable root every handshake fails
    // verification, which is the safe outcome.
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .ok()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    // HTTP/1.1 only: providers.md §5.1 allows but does not require HTTP/2 through ALPN.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Some(Arc::new(config))
}

/// The TLS handshake with SNI and verification of `host` (a DNS name or a bare IP literal).
pub async fn handshake(tcp: TcpStream, host: &str) -> io::Result<TlsStream<TcpStream>> {
    let config = config().ok_or_else(|| io::Error::other("no TLS configuration"))?;
    let name = ServerName::try_from(host.to_owned()).map_err(|_| io::Error::other("invalid server name"))?;
    TlsConnector::from(config).connect(name, tcp).await
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_configuration_builds_with_http1_alpn_only() {
        let config = super::config().unwrap();
        assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
        assert!(config.enable_sni);
    }
}
