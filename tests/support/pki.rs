//! A private certificate authority for the HTTPS tests (providers.md §5.1): a CA and one server
//! certificate signed by it, for the names the test gives, written as PEM files in a directory of their
//! own.
//!
//! The gateway has no trust setting of its own (§5.1: the platform's roots); the platform's root loader
//! reads the file named by `SSL_CERT_FILE` instead of the system store, exactly as OpenSSL does, and that
//! is how a test (or an operator with a private CA) makes the gateway trust this CA.

use std::path::PathBuf;

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};

pub struct Pki {
    pub dir: tempfile::TempDir,
}

impl Pki {
    /// A fresh CA and a server certificate for `names` (DNS names or IP literals).
    pub fn new(names: &[&str]) -> Pki {
        let dir = tempfile::tempdir().expect("tempdir");
        let ca_key = KeyPair::generate().expect("CA key");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
        let issuer = Issuer::new(ca_params, ca_key);
        let key = KeyPair::generate().expect("server key");
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let server = CertificateParams::new(names).expect("server parameters");
        let cert = server.signed_by(&key, &issuer).expect("server certificate");
        std::fs::write(dir.path().join("ca.pem"), ca.pem()).expect("ca.pem");
        std::fs::write(dir.path().join("cert.pem"), cert.pem()).expect("cert.pem");
        std::fs::write(dir.path().join("key.pem"), key.serialize_pem()).expect("key.pem");
        Pki { dir }
    }

    /// The CA certificate: what `SSL_CERT_FILE` names.
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// The server's certificate and its private key.
    pub fn server(&self) -> (PathBuf, PathBuf) {
        (self.dir.path().join("cert.pem"), self.dir.path().join("key.pem"))
    }
}
