package artifact

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errNoHosts      = "a serving certificate needs at least one DNS name or IP"
	errValidFor     = "a serving certificate needs a positive validity"
	errGenerateKey  = "cannot generate serving key"
	errSerial       = "cannot generate certificate serial number"
	errCreateCert   = "cannot create serving certificate"
	errMarshalKey   = "cannot marshal serving key"
	errNoCA         = "no certificate found in the CA PEM"
	errLoadKeyPair  = "cannot load serving certificate and key"
	errLoadCA       = "cannot load the certificate authority"
	errNoRedirect   = "artifact server redirected; refusing to follow with a token"
	certCommonName  = "modkind-artifacts"
	caCommonName    = "modkind-artifacts-ca"
	readHeaderLimit = 10 * time.Second
)

// SelfSigned makes a self-signed ECDSA P-256 serving certificate for hosts (DNS names or IPs). The
// certificate PEM is public: whoever is handed it trusts only it.
func SelfSigned(hosts []string, validFor time.Duration) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New(errNoHosts)
	}
	tmpl, key, err := template(validFor)
	if err != nil {
		return nil, nil, err
	}
	serveHosts(tmpl, hosts)
	return sign(tmpl, tmpl, &key.PublicKey, key, key)
}

// NewCA makes a certificate authority (ECDSA P-256) that signs serving certificates (Issue). Its
// certificate PEM is public: runners trust it, and so every serving certificate it signs, whichever
// replica serves it.
func NewCA(validFor time.Duration) (certPEM, keyPEM []byte, err error) {
	tmpl, key, err := template(validFor)
	if err != nil {
		return nil, nil, err
	}
	tmpl.Subject = pkix.Name{CommonName: caCommonName}
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	tmpl.ExtKeyUsage = nil
	tmpl.IsCA = true
	// It signs serving certificates only, never another authority.
	tmpl.MaxPathLenZero = true
	return sign(tmpl, tmpl, &key.PublicKey, key, key)
}

// Issue makes a serving certificate for hosts (DNS names or IPs) signed by the CA of caCertPEM and
// caKeyPEM (NewCA), valid for validFor but never beyond the CA itself.
func Issue(caCertPEM, caKeyPEM []byte, hosts []string, validFor time.Duration) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New(errNoHosts)
	}
	ca, err := tls.X509KeyPair(caCertPEM, caKeyPEM)
	if err != nil {
		return nil, nil, errors.Wrap(err, errLoadCA)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil || !caCert.IsCA {
		return nil, nil, errors.New(errLoadCA)
	}
	tmpl, key, err := template(validFor)
	if err != nil {
		return nil, nil, err
	}
	if tmpl.NotAfter.After(caCert.NotAfter) {
		tmpl.NotAfter = caCert.NotAfter
	}
	serveHosts(tmpl, hosts)
	return sign(tmpl, caCert, &key.PublicKey, key, ca.PrivateKey)
}

// template is a serving certificate's template, valid from a little before now for validFor, and
// its new key.
func template(validFor time.Duration) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	if validFor <= 0 {
		return nil, nil, errors.New(errValidFor)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, errors.Wrap(err, errGenerateKey)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, errors.Wrap(err, errSerial)
	}
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: certCommonName},
		// A little slack for clocks of nodes that run behind the controller's.
		NotBefore:             now.Add(-5 * time.Minute),
		NotAfter:              now.Add(validFor),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}, key, nil
}

// serveHosts makes tmpl a certificate for hosts: IPs as IP addresses, the rest as DNS names.
func serveHosts(tmpl *x509.Certificate, hosts []string) {
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			continue
		}
		tmpl.DNSNames = append(tmpl.DNSNames, h)
	}
}

// sign makes the certificate tmpl for pub, signed by parent's key signer, and returns it and key
// as PEM.
func sign(tmpl, parent *x509.Certificate, pub any, key *ecdsa.PrivateKey, signer any) (certPEM, keyPEM []byte, err error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, nil, errors.Wrap(err, errCreateCert)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, errors.Wrap(err, errMarshalKey)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// NewHTTPServer returns an http.Server for h that serves TLS 1.2 or later with the given
// certificate. Start it with ServeTLS(listener, "", "") or ListenAndServeTLS("", "").
func NewHTTPServer(addr string, h http.Handler, certPEM, keyPEM []byte) (*http.Server, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, errors.Wrap(err, errLoadKeyPair)
	}
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: readHeaderLimit,
	}, nil
}

// NewRenewingHTTPServer returns an http.Server for h that serves TLS 1.2 or later with the
// certificate cert returns at each handshake, so that a renewed certificate is served without a
// restart. Start it with ServeTLS(listener, "", "").
func NewRenewingHTTPServer(addr string, h http.Handler, cert func() *tls.Certificate) *http.Server {
	return &http.Server{
		Addr:    addr,
		Handler: h,
		TLSConfig: &tls.Config{
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return cert(), nil },
			MinVersion:     tls.VersionTLS12,
		},
		ReadHeaderTimeout: readHeaderLimit,
	}
}

// NewTLSClient returns an HTTP client that trusts only the certificates in caPEM. It never uses a
// proxy (the artifact server is in the cluster) and never follows a redirect (which would carry
// the token elsewhere).
func NewTLSClient(caPEM []byte) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New(errNoCA)
	}
	return &http.Client{
		Transport: &http.Transport{
			TLSClientConfig:       &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			Proxy:                 nil,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 30 * time.Second,
			ForceAttemptHTTP2:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New(errNoRedirect) },
	}, nil
}
