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
	errNoRedirect   = "artifact server redirected; refusing to follow with a token"
	certCommonName  = "modkind-artifacts"
	readHeaderLimit = 10 * time.Second
)

// SelfSigned makes a self-signed ECDSA P-256 serving certificate for hosts (DNS names or IPs). The
// certificate PEM is public: the controller hands it to runners, which trust only it.
func SelfSigned(hosts []string, validFor time.Duration) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New(errNoHosts)
	}
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
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: certCommonName},
		// A little slack for clocks of nodes that run behind the controller's.
		NotBefore:             now.Add(-5 * time.Minute),
		NotAfter:              now.Add(validFor),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			continue
		}
		tmpl.DNSNames = append(tmpl.DNSNames, h)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
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
